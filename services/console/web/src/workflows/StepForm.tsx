import { ActionIcon, Alert, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { privateUrlWarning } from '@flowdesk/contracts/ssrf';
import { IconAlertTriangle, IconPlus, IconTrash } from '@tabler/icons-react';
import type { Project } from '../api.ts';
import type { ConditionForm, HttpForm, HttpMethod, StepData, TaskForm } from './graph.ts';
import { TemplateField } from './fields.tsx';

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const OPERATORS = [
  { value: 'exists', label: 'exists' },
  { value: 'not_exists', label: 'does not exist' },
  { value: 'equals', label: 'equals' },
  { value: 'not_equals', label: 'does not equal' },
  { value: 'contains', label: 'contains' },
  { value: 'not_contains', label: 'does not contain' },
  { value: 'starts_with', label: 'starts with' },
  { value: 'greater_than', label: 'is greater than' },
  { value: 'less_than', label: 'is less than' },
];

/** The parameters of one step (docs/workflow-engine.md, "Nodes"). */
export function StepForm({ data, onChange, projects }: { data: StepData; onChange: (d: StepData) => void; projects: Project[] | null }) {
  switch (data.kind) {
    case 'http_request': {
      const f = data.form;
      const set = (p: Partial<HttpForm>) => onChange({ ...data, form: { ...f, ...p } });
      const setHeader = (i: number, p: Partial<{ name: string; value: string }>) => set({ headers: f.headers.map((h, j) => (j === i ? { ...h, ...p } : h)) });
      return (
        <Stack gap="sm">
          <Select label="Method" data={METHODS} value={f.method} onChange={(v) => v && set({ method: v })} allowDeselect={false} />
          <TemplateField label="URL" required value={f.url} onChange={(url) => set({ url })} placeholder="https://api.example.com/orders" />
          <PrivateUrlWarning url={f.url} />
          <div>
            <Text size="sm" fw={500} mb={4}>
              Headers
            </Text>
            <Stack gap={6}>
              {f.headers.map((h, i) => (
                <Group key={i} gap={6} wrap="nowrap" align="flex-start">
                  <TextInput
                    aria-label={`Header ${i + 1} name`}
                    placeholder="Name"
                    value={h.name}
                    onChange={(e) => setHeader(i, { name: e.currentTarget.value })}
                    style={{ flex: 1 }}
                  />
                  <div style={{ flex: 1.4 }}>
                    <TemplateField label={`Header ${i + 1} value`} value={h.value} onChange={(value) => setHeader(i, { value })} placeholder="Value" />
                  </div>
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    mt={26}
                    aria-label={`Remove header ${i + 1}`}
                    onClick={() => set({ headers: f.headers.filter((_, j) => j !== i) })}
                  >
                    <IconTrash size={16} />
                  </ActionIcon>
                </Group>
              ))}
              <Button
                size="xs"
                variant="subtle"
                leftSection={<IconPlus size={14} />}
                onClick={() => set({ headers: [...f.headers, { name: '', value: '' }] })}
                style={{ alignSelf: 'flex-start' }}
              >
                Add header
              </Button>
            </Stack>
          </div>
          {f.method !== 'GET' && f.method !== 'DELETE' && (
            <TemplateField
              label="Body (JSON)"
              multiline
              value={f.body}
              onChange={(body) => set({ body })}
              placeholder={'{\n  "name": "{{trigger.customer.name}}"\n}'}
              description="A string that is exactly one variable keeps its type (a number stays a number)."
            />
          )}
        </Stack>
      );
    }
    case 'condition': {
      const f = data.form;
      const set = (p: Partial<ConditionForm>) => onChange({ ...data, form: { ...f, ...p } });
      const unary = f.operator === 'exists' || f.operator === 'not_exists';
      return (
        <Stack gap="sm">
          <TemplateField label="Value to check" required value={f.left} onChange={(left) => set({ left })} placeholder="{{trigger.customer.email}}" />
          <Select label="Operator" data={OPERATORS} value={f.operator} onChange={(v) => v && set({ operator: v })} allowDeselect={false} />
          {!unary && <TemplateField label="Compare with" value={f.right} onChange={(right) => set({ right })} />}
          <Text size="xs" c="dimmed">
            Connect the <b>true</b> and <b>false</b> handles to what runs in each case. A branch left unconnected ends the run there.
          </Text>
        </Stack>
      );
    }
    case 'create_task': {
      const f = data.form;
      const set = (p: Partial<TaskForm>) => onChange({ ...data, form: { ...f, ...p } });
      const options = [{ value: '', label: 'No project (inbox)' }, ...(projects ?? []).map((p) => ({ value: p.id, label: p.name }))];
      if (f.projectId && !options.some((o) => o.value === f.projectId)) options.push({ value: f.projectId, label: f.projectId });
      return (
        <Stack gap="sm">
          <TemplateField label="Title" required value={f.title} onChange={(title) => set({ title })} placeholder="Call {{trigger.customer.name}}" />
          <Select
            label="Project"
            data={options}
            value={f.projectId}
            onChange={(v) => set({ projectId: v ?? '' })}
            allowDeselect={false}
            searchable
            nothingFoundMessage="No such project"
          />
          <TemplateField
            label="Due date"
            value={f.dueDate}
            onChange={(dueDate) => set({ dueDate })}
            placeholder="2026-12-01 or {{trigger.dueDate}}"
            description="A date (YYYY-MM-DD) or a variable holding one."
          />
          <TemplateField label="Notes" multiline value={f.notes} onChange={(notes) => set({ notes })} />
        </Stack>
      );
    }
  }
}

/** Under the URL: the run would be refused by the engine's SSRF guard (a loopback or private address). */
function PrivateUrlWarning({ url }: { url: string }) {
  const warning = privateUrlWarning(url);
  if (!warning) return null;
  return (
    <Alert color="yellow" variant="light" role="status" aria-label="Private address" icon={<IconAlertTriangle size={18} />} p="xs">
      <Text size="sm">{warning}</Text>
    </Alert>
  );
}
