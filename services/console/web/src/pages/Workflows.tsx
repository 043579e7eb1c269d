import { ActionIcon, Badge, Button, Group, Menu, Modal, NativeSelect, Paper, Radio, Skeleton, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import {
  IconCopy,
  IconDots,
  IconDownload,
  IconFileImport,
  IconPlayerPlay,
  IconPlus,
  IconSearch,
  IconSitemap,
  IconTags,
  IconTemplate,
  IconTrash,
  IconX,
} from '@tabler/icons-react';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, type Workflow, type WorkflowRun } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { FormActions, FormError } from '../components/FormActions.tsx';
import { RunStatusBadge } from '../components/RunStatus.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { ago, exact } from '../format.ts';
import { Link, navigate } from '../router.tsx';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { RunNowDialog } from '../workflows/RunNowDialog.tsx';
import { downloadWorkflow, ImportWorkflowModal } from '../workflows/WorkflowFile.tsx';
import { TemplateGallery } from '../workflows/gallery/TemplateGallery.tsx';
import { defaultTriggerConfig } from '../workflows/TriggerPanel.tsx';
import { TRIGGER_DESCRIPTION, TRIGGER_LABEL, type TriggerType } from '../workflows/triggers.ts';
import { WORKFLOW_SORTS, type WorkflowSort } from '../workflows/sort.ts';
import { parseTags } from '../workflows/tags.ts';
import { workspace } from '../workspace.ts';
import { TableHead, TableRegion } from '../components/TableRegion.tsx';
import { actAndReload, useConfirmAction } from '../useConfirmAction.ts';

interface Summary {
  last: { status: WorkflowRun['status']; createdAt: string } | null;
  today: number;
}

/** Last run and runs in the last 24 h of every workflow: one call to the engine's runs summary. */
function useSummaries(workflows: Workflow[] | null) {
  const [summaries, setSummaries] = useState<Record<string, Summary | 'failed'>>({});
  useEffect(() => {
    if (!workflows) return;
    let stop = false;
    workspace.runsSummary().then(
      (summary) => {
        const byId = new Map(summary.workflows.map((w) => [w.workflowId, w]));
        const rows = workflows.map((w) => [w.id, { last: byId.get(w.id)?.lastRun ?? null, today: byId.get(w.id)?.runs ?? 0 }] as const);
        if (!stop) setSummaries(Object.fromEntries(rows));
      },
      () => {
        if (!stop) setSummaries(Object.fromEntries(workflows.map((w) => [w.id, 'failed' as const])));
      },
    );
    return () => {
      stop = true;
    };
  }, [workflows]);
  return summaries;
}

/** The list's filters: a search of name, description and tags, one tag, the trigger type, active or not. */
interface Filters {
  q: string;
  tag: string;
  trigger: TriggerType | '';
  state: 'all' | 'active' | 'inactive';
}
const NO_FILTERS: Filters = { q: '', tag: '', trigger: '', state: 'all' };

export function WorkflowsPage() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const filtering = filters.q.trim() !== '' || filters.tag !== '' || filters.trigger !== '' || filters.state !== 'all';
  /** Searched, filtered and sorted by the server (GET /workflows): the first 100 in that order. */
  const [sort, setSort] = useState<WorkflowSort>('created');
  /** More match than the 100 shown. */
  const [more, setMore] = useState(false);
  const load = useCallback(
    () =>
      api
        .listWorkflows({
          q: filters.q.trim() || undefined,
          tag: filters.tag.trim() || undefined,
          triggerType: filters.trigger || undefined,
          active: filters.state === 'all' ? undefined : filters.state === 'active',
          sort,
        })
        .then((page) => {
          setMore(page.nextCursor !== null);
          return page.items;
        }),
    [filters, sort],
  );
  const { items, error, reload } = useList<Workflow>(load);
  const summaries = useSummaries(items);
  /** The workflow whose tags are being edited. */
  const [tagging, setTagging] = useState<Workflow | null>(null);
  const deleting = useConfirmAction<Workflow>({
    run: (w) => api.deleteWorkflow(w.id),
    done: (w) => `Deleted “${w.name}”.`,
    failed: 'Could not delete the workflow',
    reload,
  });
  const [creating, setCreating] = useState(false);
  const [browsing, setBrowsing] = useState(false);
  const [importing, setImporting] = useState(false);
  /** The workflow whose Run now dialog is open (from its row's menu, as in the editor). */
  const [runningNow, setRunningNow] = useState<Workflow | null>(null);
  /** Active switches flipped and not yet confirmed by the server: shown at once, put back if refused (as in the editor). */
  const [switching, setSwitching] = useState<Record<string, boolean>>({});

  useEffect(() => {
    document.title = 'Workflows · Flowdesk';
  }, []);

  const setActive = useCallback(
    async (w: Workflow, active: boolean) => {
      setSwitching((s) => ({ ...s, [w.id]: active }));
      await actAndReload(
        () => api.updateWorkflow(w.id, { active }),
        `“${w.name}” is ${active ? 'active' : 'inactive'}.`,
        `Could not ${active ? 'activate' : 'deactivate'} “${w.name}”`,
        reload,
      );
      setSwitching(({ [w.id]: _done, ...rest }) => rest);
    },
    [reload],
  );

  // A copy starts inactive, with its own webhook URL and secret.
  const duplicate = (w: Workflow) =>
    actAndReload(
      () =>
        api.createWorkflow({
          name: `${w.name} (copy)`.slice(0, 200),
          description: w.description,
          triggerType: w.triggerType,
          graph: w.graph,
          triggerConfig: w.triggerConfig,
          executionOrder: w.executionOrder,
          // A signed trigger reports requireSecret false (the signature authenticates): the copy keeps the header required.
          requireWebhookSecret: w.webhook ? w.webhook.requireSecret || w.webhook.authentication === 'standard-webhooks' : true,
          active: false,
          // A pinned sample goes with the copy (its runs do not: no run id).
          ...(w.samplePin && w.samplePayload
            ? { sample: { payload: w.samplePayload, source: w.samplePin.source === 'import' || w.samplePin.source === 'typed' ? 'typed' : w.samplePin.source } }
            : {}),
        }),
      `Duplicated “${w.name}”.`,
      'Could not duplicate the workflow',
      reload,
    );

  const exportFile = (w: Workflow) =>
    downloadWorkflow(w).catch((err: unknown) =>
      notifications.show({ color: 'red', title: `Could not export “${w.name}”`, message: err instanceof Error ? err.message : String(err) }),
    );

  const createButton = (
    <Group gap="xs" wrap="wrap">
      <Button variant="default" leftSection={<IconFileImport size={16} />} onClick={() => setImporting(true)}>
        Import
      </Button>
      <Button variant="default" leftSection={<IconTemplate size={16} />} onClick={() => setBrowsing(true)}>
        Start from a template
      </Button>
      <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
        New workflow
      </Button>
    </Group>
  );

  return (
    <>
      <PageHeader
        title="Workflows"
        description="A workflow starts from its trigger — a webhook request, a schedule, a note, a change to a task, project or calendar entry, or Run now — and runs its steps: conditions, HTTP requests, new tasks."
        action={items && (items.length > 0 || filtering) ? createButton : undefined}
      />
      {items && (items.length > 0 || filtering) && (
        <Group gap="xs" mb="sm" wrap="wrap" role="search" aria-label="Filter workflows">
          <TextInput
            aria-label="Search workflows"
            placeholder="Search name or description"
            size="xs"
            leftSection={<IconSearch size={14} />}
            value={filters.q}
            onChange={(e) => setFilters({ ...filters, q: e.currentTarget.value })}
            style={{ flex: '1 1 14rem', maxWidth: '22rem' }}
          />
          <NativeSelect
            aria-label="Trigger"
            size="xs"
            value={filters.trigger}
            onChange={(e) => setFilters({ ...filters, trigger: e.currentTarget.value as Filters['trigger'] })}
            data={[{ value: '', label: 'Every trigger' }, ...(Object.keys(TRIGGER_LABEL) as TriggerType[]).map((t) => ({ value: t, label: TRIGGER_LABEL[t] }))]}
          />
          <NativeSelect
            aria-label="Active"
            size="xs"
            value={filters.state}
            onChange={(e) => setFilters({ ...filters, state: e.currentTarget.value as Filters['state'] })}
            data={[
              { value: 'all', label: 'Active or not' },
              { value: 'active', label: 'Active' },
              { value: 'inactive', label: 'Inactive' },
            ]}
          />
          <NativeSelect aria-label="Sort by" size="xs" value={sort} onChange={(e) => setSort(e.currentTarget.value as WorkflowSort)} data={WORKFLOW_SORTS} />
          {filters.tag !== '' && (
            <Badge
              variant="light"
              color="indigo"
              tt="none"
              size="lg"
              rightSection={
                <ActionIcon
                  size="xs"
                  variant="transparent"
                  color="indigo"
                  aria-label={`Stop filtering by tag ${filters.tag}`}
                  onClick={() => setFilters({ ...filters, tag: '' })}
                >
                  <IconX size={12} />
                </ActionIcon>
              }
            >
              Tag: {filters.tag}
            </Badge>
          )}
        </Group>
      )}
      {more && (
        <Text size="sm" c="dimmed" mb="xs">
          Showing the first 100 in this order: search or filter to find the others.
        </Text>
      )}
      {error && <ErrorState title="Could not load your workflows" message={error} onRetry={() => void reload()} />}
      {!items && !error && <Skeleton role="status" height={160} radius="lg" aria-label="Loading workflows" />}
      {items && items.length === 0 && filtering && (
        <Paper withBorder radius="lg">
          <EmptyState
            icon={<IconSearch size={26} />}
            title="No workflow matches"
            action={
              <Button variant="default" onClick={() => setFilters(NO_FILTERS)}>
                Clear the filters
              </Button>
            }
          >
            Nothing here has that in its name, description or tags with the tag, trigger and state chosen.
          </EmptyState>
        </Paper>
      )}
      {items && items.length === 0 && !filtering && (
        <Paper withBorder radius="lg">
          <EmptyState icon={<IconSitemap size={26} />} title="No workflows yet" action={createButton}>
            Create one, send it a sample request, and build its steps from the fields that arrived.
          </EmptyState>
        </Paper>
      )}
      {items && items.length > 0 && (
        <TableRegion label="Workflows">
          <Table verticalSpacing="sm" horizontalSpacing="md" highlightOnHover aria-label="Workflows">
            {/* The name is what a person reads the list by: it keeps 11 rem, the other columns scroll. */}
            <TableHead columns={['Name', 'Trigger', 'Active', 'Last run', 'Runs (24 h)']} nameMinWidth="11rem" />
            <Table.Tbody>
              {items.map((w) => {
                const s = summaries[w.id];
                return (
                  <Table.Tr key={w.id}>
                    <Table.Td fw={550}>
                      <Link to={`/workflows/${w.id}`} className="fd-link">
                        {w.name}
                      </Link>
                      {w.tags.length > 0 && (
                        <Group gap={4} mt={4} wrap="wrap" data-testid={`tags-${w.id}`}>
                          {w.tags.map((t) => (
                            <Badge
                              key={t}
                              component="button"
                              type="button"
                              variant="light"
                              color="indigo"
                              tt="none"
                              style={{ cursor: 'pointer' }}
                              aria-label={`Filter by tag ${t}`}
                              onClick={() => setFilters({ ...filters, tag: t })}
                            >
                              {t}
                            </Badge>
                          ))}
                        </Group>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Badge variant="light" color="gray" tt="none">
                        {TRIGGER_LABEL[w.triggerType]}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      <Switch
                        checked={switching[w.id] ?? w.active}
                        onChange={(e) => void setActive(w, e.currentTarget.checked)}
                        aria-label={`Active: ${w.name}`}
                      />
                    </Table.Td>
                    <Table.Td>
                      {s === undefined ? (
                        <Skeleton role="status" height={18} width={90} aria-label="Loading" />
                      ) : s === 'failed' || !s.last ? (
                        <Text size="sm" c="dimmed">
                          {s === 'failed' ? '—' : 'Never'}
                        </Text>
                      ) : (
                        <Group gap={6} wrap="nowrap">
                          <RunStatusBadge status={s.last.status} />
                          <Text size="sm" c="dimmed" title={exact(s.last.createdAt)}>
                            {ago(s.last.createdAt)}
                          </Text>
                        </Group>
                      )}
                    </Table.Td>
                    <Table.Td>{s === undefined ? '' : s === 'failed' ? '—' : String(s.today)}</Table.Td>
                    <Table.Td ta="right">
                      <Menu position="bottom-end" withinPortal>
                        <Menu.Target>
                          <ActionIcon variant="subtle" color="gray" aria-label={`Actions for ${w.name}`}>
                            <IconDots size={16} />
                          </ActionIcon>
                        </Menu.Target>
                        <Menu.Dropdown>
                          <Menu.Item leftSection={<IconPlayerPlay size={16} />} onClick={() => setRunningNow(w)}>
                            Run now
                          </Menu.Item>
                          <Menu.Item leftSection={<IconCopy size={16} />} onClick={() => void duplicate(w)}>
                            Duplicate
                          </Menu.Item>
                          <Menu.Item leftSection={<IconDownload size={16} />} onClick={() => void exportFile(w)}>
                            Export
                          </Menu.Item>
                          <Menu.Item leftSection={<IconTags size={16} />} onClick={() => setTagging(w)}>
                            Edit tags
                          </Menu.Item>
                          <Menu.Item leftSection={<IconTrash size={16} />} color="red" onClick={() => deleting.ask(w)}>
                            Delete
                          </Menu.Item>
                        </Menu.Dropdown>
                      </Menu>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      <CreateWorkflowModal
        opened={creating}
        onClose={() => setCreating(false)}
        onTemplates={() => {
          setCreating(false);
          setBrowsing(true);
        }}
      />
      <TemplateGallery opened={browsing} onClose={() => setBrowsing(false)} />
      <ImportWorkflowModal opened={importing} onClose={() => setImporting(false)} onImported={() => void reload()} />
      {runningNow && (
        <RunNowDialog
          workflow={runningNow}
          opened
          onClose={() => setRunningNow(null)}
          onStarted={(run) => {
            notifications.show({ color: 'green', message: `Run of “${runningNow.name}” started.` });
            navigate(`/runs/${run.id}`);
          }}
        />
      )}
      {tagging && <TagsDialog workflow={tagging} onClose={() => setTagging(null)} onSaved={() => void reload()} />}
      <ConfirmDialog {...deleting.dialog} title={`Delete “${deleting.target?.name ?? ''}”?`} confirmLabel="Delete workflow">
        Its webhook URL stops answering and its runs are deleted with it. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}

function CreateWorkflowModal({ opened, onClose, onTemplates }: { opened: boolean; onClose: () => void; onTemplates: () => void }) {
  const [name, setName] = useState('');
  const [triggerType, setTriggerType] = useState<TriggerType>('webhook');
  const { busy, error, run } = useSubmit();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const created = await api.createWorkflow({ name: name.trim(), triggerType, triggerConfig: defaultTriggerConfig(triggerType) });
      setName('');
      setTriggerType('webhook');
      onClose();
      navigate(`/workflows/${created.id}`);
    });
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title={<Text fw={650}>New workflow</Text>} centered radius="lg">
      <form onSubmit={submit}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput
            label="Name"
            description="What it does, e.g. “New order → task”."
            required
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <Radio.Group label="Trigger" description="What starts it; you can change it in the editor." value={triggerType} onChange={(v) => setTriggerType(v)}>
            <Stack gap={6} mt={6}>
              {(Object.keys(TRIGGER_LABEL) as TriggerType[]).map((t) => (
                <Radio
                  key={t}
                  value={t}
                  label={TRIGGER_LABEL[t]}
                  description={t === 'webhook' ? 'An HTTP request to its URL (you get a URL and a secret).' : TRIGGER_DESCRIPTION[t]}
                />
              ))}
            </Stack>
          </Radio.Group>
          <FormActions onCancel={onClose} busy={busy} disabled={!name.trim()} mt="xs">
            Create workflow
          </FormActions>
          <Button variant="subtle" size="xs" leftSection={<IconTemplate size={14} />} onClick={onTemplates} style={{ alignSelf: 'flex-start' }}>
            Or start from a template
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

/** The tags of one workflow, edited as one line (PATCH /workflows/:id { tags }: no new version). */
function TagsDialog({ workflow, onClose, onSaved }: { workflow: Workflow; onClose: () => void; onSaved: () => void }) {
  const [text, setText] = useState(workflow.tags.join(' '));
  const { busy, error, run } = useSubmit();
  const parsed = parseTags(text);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (parsed.problem) return;
    void run(async () => {
      await api.updateWorkflow(workflow.id, { tags: parsed.tags });
      notifications.show({ color: 'green', message: `Tags of “${workflow.name}” saved.` });
      onSaved();
      onClose();
    });
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={<Text fw={650}>Tags of “{workflow.name}”</Text>} centered radius="lg">
      <form onSubmit={submit}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput
            label="Tags"
            description="Separated by spaces or commas; up to 20, each up to 50 characters."
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            error={parsed.problem}
            data-autofocus
          />
          <FormActions onCancel={onClose} busy={busy} disabled={Boolean(parsed.problem)} mt="xs">
            Save tags
          </FormActions>
        </Stack>
      </form>
    </Modal>
  );
}
