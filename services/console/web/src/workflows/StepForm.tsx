import { ActionIcon, Alert, Anchor, Autocomplete, Badge, Button, Fieldset, Group, Select, Stack, Switch, Text, TextInput } from '@mantine/core';
import { credentialType, credentialTypesFor } from '@flowdesk/contracts/credential-types';
import { EMPTY_ALLOWLIST, parseAllowlist, privateUrlWarning, type SsrfAllowlist } from '@flowdesk/contracts/ssrf';
import { IconAlertTriangle, IconPlus, IconTrash } from '@tabler/icons-react';
import type { FieldWidget, FormField } from '@flowdesk/contracts/nodes';
import { useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { api, type Credential, type Project } from '../api.ts';
import {
  branchesAfterRemoving,
  definitionOf,
  emptyRow,
  fieldsOf,
  type FormRecord,
  type FormRow,
  type FormValue,
  type StepData,
  type StepKind,
} from './graph.ts';
import { TemplateField } from './fields.tsx';
import { workspace, type WorkflowItem } from '../workspace.ts';

/** Where a step's branch edges go after a form change (a Switch rule removed): old handle → new, null: dropped. */
export type BranchMoves = Map<string, string | null>;

interface FieldProps {
  field: FormField;
  value: FormValue;
  set: (value: FormValue, moves?: BranchMoves) => void;
  projects: Project[] | null;
  /** The step's node label ("Slack"): which credentials its Credential field takes. */
  stepLabel: string;
  /** The step's other fields as they stand (Slack's mode decides which credential types its Credential field takes). */
  form: Readonly<Record<string, FormValue>>;
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A string field: templated (variables may be picked into it) or plain. */
function TextWidget({ field, value, set }: FieldProps) {
  const { hint } = field;
  const text = typeof value === 'string' ? value : '';
  if (hint.template || hint.multiline) {
    return (
      <>
        <TemplateField
          label={hint.label}
          required={field.required}
          multiline={hint.multiline}
          value={text}
          onChange={set}
          placeholder={hint.placeholder}
          description={hint.description}
        />
        {hint.outboundUrl && <PrivateUrlWarning url={text} />}
      </>
    );
  }
  return (
    <TextInput
      label={hint.label}
      required={field.required}
      value={text}
      onChange={(e) => set(e.currentTarget.value)}
      placeholder={hint.placeholder}
      description={hint.description}
    />
  );
}

let parsedAllowlist: { text: string; list: SsrfAllowlist } = { text: '', list: EMPTY_ALLOWLIST };
/** The session's SSRF_ALLOWLIST, parsed once per text (the server checked it at start; unreadable: nothing opened). */
function operatorAllowlist(text: string): SsrfAllowlist {
  if (parsedAllowlist.text !== text) {
    let list = EMPTY_ALLOWLIST;
    try {
      list = parseAllowlist(text);
    } catch {
      // keep warning about everything
    }
    parsedAllowlist = { text, list };
  }
  return parsedAllowlist.list;
}

/** Under an outbound URL: the run would be refused by the SSRF guard (docs/workflow-engine.md), so say so while editing. */
function PrivateUrlWarning({ url }: { url: string }) {
  const warning = privateUrlWarning(url, operatorAllowlist(api.ssrfAllowlist));
  if (!warning) return null;
  return (
    <Alert color="yellow" variant="light" role="status" aria-label="Private address" icon={<IconAlertTriangle size={18} />} p="xs">
      <Text size="sm">{warning}</Text>
    </Alert>
  );
}

function SelectWidget({ field, value, set }: FieldProps) {
  return (
    <Select
      label={field.hint.label}
      data={field.options!.map((o) => ({ ...o }))}
      value={typeof value === 'string' ? value : null}
      onChange={(v) => v && set(v)}
      allowDeselect={false}
      description={field.hint.description}
    />
  );
}

/** A boolean: on or off; absent reads as the hint's default. */
function SwitchWidget({ field, value, set }: FieldProps) {
  const checked = typeof value === 'boolean' ? value : field.hint.default === true;
  return <Switch label={field.hint.label} description={field.hint.description} checked={checked} onChange={(e) => set(e.currentTarget.checked)} />;
}

/**
 * A list of objects as rows (a Condition's rules, a Switch's): one input per column, text or select,
 * a column hidden by its hint for the row (the right-hand side of "exists"). A row that is a branch
 * (a Switch rule) says which; removing it moves the edges of the rows after it up one.
 */
function RowsWidget({ field, value, set }: FieldProps) {
  const rows = Array.isArray(value) ? (value as FormRecord[]) : [];
  const noun = field.hint.noun ?? 'row';
  const Noun = capital(noun);
  const setCell = (i: number, key: string, v: string) => set(rows.map((r, j) => (j === i ? { ...r, [key]: v } : r)));
  const full = field.maxRows !== undefined && rows.length >= field.maxRows;
  return (
    <div>
      <Text size="sm" fw={500} mb={4}>
        {field.hint.label}
      </Text>
      {field.hint.description && (
        <Text size="xs" c="dimmed" mb={4}>
          {field.hint.description}
        </Text>
      )}
      <Stack gap={6}>
        {rows.map((row, i) => (
          <Fieldset
            key={i}
            p="xs"
            legend={
              <Group gap={6}>
                <span>
                  {Noun} {i + 1}
                </span>
                {field.hint.rowBranch && (
                  <Badge size="xs" variant="light">
                    branch {field.hint.rowBranch(i)}
                  </Badge>
                )}
              </Group>
            }
          >
            <Group gap={6} wrap="nowrap" align="flex-start">
              <Stack gap={6} style={{ flex: 1 }}>
                {(field.columns ?? []).map((c) => {
                  if (c.hint.hiddenWhen?.(row)) return null;
                  const label = `${Noun} ${i + 1} ${c.hint.label.toLowerCase()}`;
                  const cell = row[c.key] ?? '';
                  if (c.widget === 'select')
                    return (
                      <Select
                        key={c.key}
                        label={label}
                        data={c.options!.map((o) => ({ ...o }))}
                        value={cell || null}
                        onChange={(v) => v && setCell(i, c.key, v)}
                        allowDeselect={false}
                      />
                    );
                  return c.hint.template ? (
                    <TemplateField key={c.key} label={label} value={cell} onChange={(v) => setCell(i, c.key, v)} placeholder={c.hint.placeholder} />
                  ) : (
                    <TextInput
                      key={c.key}
                      label={label}
                      value={cell}
                      onChange={(e) => setCell(i, c.key, e.currentTarget.value)}
                      placeholder={c.hint.placeholder}
                    />
                  );
                })}
              </Stack>
              <ActionIcon
                variant="subtle"
                color="red"
                mt={26}
                aria-label={`Remove ${noun} ${i + 1}`}
                onClick={() =>
                  set(
                    rows.filter((_, j) => j !== i),
                    branchesAfterRemoving(field, rows.length, i),
                  )
                }
              >
                <IconTrash size={16} />
              </ActionIcon>
            </Group>
          </Fieldset>
        ))}
        <Button
          size="xs"
          variant="subtle"
          leftSection={<IconPlus size={14} />}
          disabled={full}
          onClick={() => set([...rows, emptyRow(field)])}
          style={{ alignSelf: 'flex-start' }}
        >
          {full ? `At most ${field.maxRows} ${noun}s` : `Add ${noun}`}
        </Button>
      </Stack>
    </div>
  );
}

/** Rows of name → value (a map or a list of { name, value }); values are templated when the hint says so. */
function KeyValueWidget({ field, value, set }: FieldProps) {
  const rows = Array.isArray(value) ? (value as FormRow[]) : [];
  const noun = field.hint.noun ?? 'row';
  const Noun = capital(noun);
  const setRow = (i: number, p: Partial<FormRow>) => set(rows.map((r, j) => (j === i ? { ...r, ...p } : r)));
  return (
    <div>
      <Text size="sm" fw={500} mb={4}>
        {field.hint.label}
      </Text>
      <Stack gap={6}>
        {rows.map((r, i) => (
          <Group key={i} gap={6} wrap="nowrap" align="flex-start">
            <TextInput
              aria-label={`${Noun} ${i + 1} name`}
              placeholder="Name"
              value={r.name}
              onChange={(e) => setRow(i, { name: e.currentTarget.value })}
              style={{ flex: 1 }}
            />
            <div style={{ flex: 1.4 }}>
              {field.hint.template ? (
                <TemplateField label={`${Noun} ${i + 1} value`} value={r.value} onChange={(v) => setRow(i, { value: v })} placeholder="Value" />
              ) : (
                <TextInput
                  aria-label={`${Noun} ${i + 1} value`}
                  placeholder="Value"
                  value={r.value}
                  onChange={(e) => setRow(i, { value: e.currentTarget.value })}
                />
              )}
            </div>
            <ActionIcon variant="subtle" color="red" mt={26} aria-label={`Remove ${noun} ${i + 1}`} onClick={() => set(rows.filter((_, j) => j !== i))}>
              <IconTrash size={16} />
            </ActionIcon>
          </Group>
        ))}
        <Button
          size="xs"
          variant="subtle"
          leftSection={<IconPlus size={14} />}
          onClick={() => set([...rows, { name: '', value: '' }])}
          style={{ alignSelf: 'flex-start' }}
        >
          Add {noun}
        </Button>
      </Stack>
    </div>
  );
}

/**
 * The project select's options: the empty value first, labelled by the field (Find Tasks: "Any
 * project", no filter) or "No project (inbox)" (the create nodes), then the user's projects; an id
 * not among them (a variable, a deleted project) is kept as itself.
 */
export function projectOptions(field: Pick<FormField, 'hint'>, projects: readonly Pick<Project, 'id' | 'name'>[] | null, current: string) {
  const options = [{ value: '', label: field.hint.placeholder ?? 'No project (inbox)' }, ...(projects ?? []).map((p) => ({ value: p.id, label: p.name }))];
  if (current && !options.some((o) => o.value === current)) options.push({ value: current, label: current });
  return options;
}

/** One of the user's projects, or the empty value (the inbox, or no filter: projectOptions). */
function ProjectWidget({ field, value, set, projects }: FieldProps) {
  const current = typeof value === 'string' ? value : '';
  const options = projectOptions(field, projects, current);
  return (
    <Select
      label={field.hint.label}
      data={options}
      value={current}
      onChange={(v) => set(v ?? '')}
      allowDeselect={false}
      searchable
      nothingFoundMessage="No such project"
    />
  );
}

/** One of the user's workflows (the Run workflow node): by name; an id not in the list (a variable set over the API) is kept. */
function WorkflowWidget({ field, value, set }: FieldProps) {
  const [workflows, setWorkflows] = useState<WorkflowItem[] | null>(null);
  useEffect(() => {
    workspace.listWorkflows().then(setWorkflows, () => setWorkflows([]));
  }, []);
  const current = typeof value === 'string' ? value : '';
  const options = (workflows ?? []).map((w) => ({ value: w.id, label: w.name }));
  if (current && !options.some((o) => o.value === current)) options.push({ value: current, label: current });
  return (
    <Select
      label={field.hint.label}
      description={field.hint.description}
      placeholder={workflows ? 'Choose a workflow' : 'Loading…'}
      data={options}
      value={current || null}
      onChange={(v) => set(v ?? '')}
      searchable
      nothingFoundMessage="No such workflow"
    />
  );
}

/**
 * The credential picker's choices for a step (by node label): the owner's credentials of the types
 * whose `usedBy` names it (libs/contracts credentialTypesFor), grouped by type when it takes more than
 * one, and what to say about the name typed: nothing when it is one of them, else why not (no such
 * credential yet, or one of another type). `credentials` null: the list is not known (no hint).
 */
export function credentialOptions(
  stepLabel: string,
  credentials: readonly (Pick<Credential, 'name' | 'type'> & Partial<Pick<Credential, 'connection' | 'fields'>>)[] | null,
  current: string,
  params?: Readonly<Record<string, unknown>>,
) {
  const types = credentialTypesFor(stepLabel, params);
  const typeLabel = (t: string) => credentialType(t)?.label ?? t;
  const accepted = (credentials ?? []).filter((c) => (types as readonly string[]).includes(c.type));
  const data =
    types.length > 1
      ? types.map((t) => ({ group: typeLabel(t), items: accepted.filter((c) => c.type === t).map((c) => c.name) })).filter((g) => g.items.length > 0)
      : accepted.map((c) => c.name);
  const a = (label: string) => `${/^(?:[aeiou]|smtp\b)/i.test(label) ? 'an' : 'a'} ${label}`;
  const wanted = types.map(typeLabel).join(' or ');
  const name = current.trim();
  let problem: string | null = null;
  if (credentials && name) {
    const found = credentials.find((c) => c.name === name);
    if (!found) problem = `No credential named “${name}” yet: create it before the step runs.`;
    else if (!(types as readonly string[]).includes(found.type)) problem = `“${name}” is ${a(typeLabel(found.type))}; this step takes ${a(wanted)}.`;
    // An OAuth2 credential that cannot give a token fails the step: said here, before a run finds out.
    else if (found.connection?.status === 'needs_reconnect') problem = `“${name}” needs reconnecting: Reconnect it in Settings → Credentials.`;
    else if (found.connection?.status === 'not_connected' && credentialType(found.type)?.connects?.(found.fields ?? {}))
      problem = `“${name}” is not connected yet: Connect it in Settings → Credentials.`;
  }
  return { types, wanted, data, none: credentials !== null && accepted.length === 0, problem };
}

/** A credential's name (a node's Credential field): the owner's credentials of the types the step takes, or any name typed. */
function CredentialWidget({ field, value, set, stepLabel, form }: FieldProps) {
  const [credentials, setCredentials] = useState<Credential[] | null>(null);
  useEffect(() => {
    api.listCredentials().then(setCredentials, () => setCredentials(null));
  }, []);
  const current = typeof value === 'string' ? value : '';
  const { data, wanted, none, problem } = credentialOptions(stepLabel, credentials, current, form);
  return (
    <div>
      <Autocomplete
        label={field.hint.label}
        required={field.required}
        description={field.hint.description}
        placeholder={field.hint.placeholder}
        data={data}
        value={current}
        onChange={set}
      />
      {none && (
        <Text size="xs" c="dimmed" mt={4} role="status" aria-label="No credential of this type">
          You have no {wanted} credential yet.{' '}
          <Anchor href="/settings/credentials" target="_blank" rel="noopener" size="xs" underline="always">
            Create one in Settings → Credentials
          </Anchor>{' '}
          (it opens in a new tab), then type or pick its name here.
        </Text>
      )}
      {problem && (
        <Alert color="yellow" variant="light" role="status" aria-label="Credential check" icon={<IconAlertTriangle size={18} />} p="xs" mt={4}>
          <Text size="sm">{problem}</Text>
        </Alert>
      )}
    </div>
  );
}

/** The widget per kind: a kind a node definition may name and this table lacks does not compile. */
const WIDGETS: Record<FieldWidget, ComponentType<FieldProps> | null> = {
  text: TextWidget,
  // JSON is edited as text; graph.ts parses it on save and reports what does not parse.
  json: TextWidget,
  select: SelectWidget,
  switch: SwitchWidget,
  'key-value': KeyValueWidget,
  rows: RowsWidget,
  project: ProjectWidget,
  workflow: WorkflowWidget,
  credential: CredentialWidget,
  none: null,
};

/** A node type that needs more than the generated form registers its own here (none does yet). */
const CUSTOM_FORMS: Partial<Record<StepKind, ComponentType<StepFormProps>>> = {};

interface StepFormProps {
  data: StepData;
  /** `moves`: the step's branch edges to rename or drop with this change (a Switch rule removed). */
  onChange: (d: StepData, moves?: BranchMoves) => void;
  projects: Project[] | null;
}

/** `**x**` in a definition's note → bold. */
function noteText(note: string): ReactNode[] {
  return note.split(/\*\*(.+?)\*\*/).map((part, i) => (i % 2 ? <b key={i}>{part}</b> : part));
}

/** The parameters of one step: the form generated from its node type's params schema and hints (libs/contracts/src/nodes). */
export function StepForm(props: StepFormProps) {
  const { data, onChange, projects } = props;
  const Custom = CUSTOM_FORMS[data.kind];
  if (Custom) return <Custom {...props} />;
  const definition = definitionOf(data.kind);
  return (
    <Stack gap="sm">
      {fieldsOf(data.kind).map((field) => {
        const Widget = WIDGETS[field.widget];
        if (!Widget || field.hint.hiddenWhen?.(data.form)) return null;
        const set = (value: FormValue, moves?: BranchMoves) => onChange({ ...data, form: { ...data.form, [field.key]: value } }, moves);
        return (
          <Widget key={field.key} field={field} value={data.form[field.key]} set={set} projects={projects} stepLabel={definition.label} form={data.form} />
        );
      })}
      {definition.note && (
        <Text size="xs" c="dimmed">
          {noteText(definition.note)}
        </Text>
      )}
    </Stack>
  );
}
