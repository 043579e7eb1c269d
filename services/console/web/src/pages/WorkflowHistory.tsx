import '@xyflow/react/dist/style.css';
import { Background, Controls, ReactFlow, ReactFlowProvider, type Edge } from '@xyflow/react';
import { Alert, Anchor, Badge, Button, Card, Group, Loader, NativeSelect, Paper, Skeleton, Stack, Table, Tabs, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconArrowBackUp } from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, ApiError, type Workflow, type WorkflowVersion, type WorkflowVersionSummary } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { ErrorState, PageHeader } from '../components/States.tsx';
import { TableHead, TableRegion } from '../components/TableRegion.tsx';
import { ago, exact } from '../format.ts';
import { Link, navigate } from '../router.tsx';
import { nodeTypes, type AnyNode } from '../workflows/canvas-nodes.tsx';
import { KIND_LABEL, toCanvas, type StepKind } from '../workflows/graph.ts';
import { TRIGGER_LABEL } from '../workflows/triggers.ts';
import { diffDefinitions, settingLabel, showValue, type DefinitionDiff, type ValueChange } from '../workflows/version-diff.ts';
import type { WorkflowEdge, WorkflowVersionDefinition } from '@flowdesk/contracts';

/** `?version=N&compare=M` of the page's address: which version is open and which it is compared with. */
function fromAddress(): { version: number | null; compare: number | null } {
  const q = new URLSearchParams(window.location.search);
  const n = (k: string) => {
    const v = Number(q.get(k));
    return Number.isInteger(v) && v >= 1 ? v : null;
  };
  return { version: n('version'), compare: n('compare') };
}

/** Who saved a version: "You" for the signed-in user, and the client it came through (an API key, an MCP client). */
function authorOf(v: WorkflowVersionSummary): string {
  const who = v.author.userId === api.currentUser?.id ? 'You' : `User ${v.author.userId.slice(0, 8)}`;
  if (!v.author.client || v.author.client === 'console') return who;
  return `${who}, via ${v.author.client}`;
}

/** A workflow's versions, one open read-only (canvas, what changed against another, its JSON), and Restore. */
export function WorkflowHistoryPage({ id }: { id: string }) {
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [versions, setVersions] = useState<WorkflowVersionSummary[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [chosen, setChosen] = useState(fromAddress);
  const [restoring, setRestoring] = useState(false);

  const load = useCallback(
    () =>
      Promise.all([api.getWorkflow(id), api.listWorkflowVersions(id)]).then(
        ([w, page]) => {
          setWorkflow(w);
          setVersions(page.items);
          setNextCursor(page.nextCursor);
          setFailed(null);
        },
        (err: unknown) =>
          setFailed(err instanceof ApiError && err.status === 404 ? 'This workflow does not exist, or it is not yours.' : (err as Error).message),
      ),
    [id],
  );
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    document.title = `History · ${workflow?.name ?? 'Workflow'} · Flowdesk`;
  }, [workflow?.name]);

  const more = async () => {
    try {
      const page = await api.listWorkflowVersions(id, nextCursor);
      setVersions((vs) => [...(vs ?? []), ...page.items]);
      setNextCursor(page.nextCursor);
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not load older versions', message: (err as Error).message });
    }
  };

  const current = versions?.[0]?.number ?? null;
  const open = chosen.version ?? current;
  /** The other side of the comparison: the one chosen, else the current version (else, for the current one, the version before it). */
  const other = chosen.compare ?? (open === current ? (versions?.[1]?.number ?? null) : current);
  const choose = (version: number | null, compare: number | null) => {
    setChosen({ version, compare });
    const q = new URLSearchParams();
    if (version) q.set('version', String(version));
    if (compare) q.set('compare', String(compare));
    const search = q.toString();
    window.history.replaceState(null, '', `${window.location.pathname}${search ? `?${search}` : ''}`);
  };

  const restore = async () => {
    if (!open) return;
    const saved = await api.restoreWorkflowVersion(id, open).catch((err: unknown) => {
      notifications.show({ color: 'red', title: `Could not restore version ${open}`, message: err instanceof Error ? err.message : String(err) });
      throw err;
    });
    notifications.show({ color: 'green', message: `Restored version ${open} as a new version of “${saved.name}”.` });
    navigate(`/workflows/${id}`);
  };

  if (failed) return <ErrorState title="Could not load the history" message={failed} onRetry={() => void load()} />;

  return (
    <>
      <PageHeader
        title={`History · ${workflow?.name ?? 'Workflow'}`}
        description="Every save of this workflow's definition is a version. Open one to see it and what differs from another version; restoring one saves it again as the newest version, so nothing is lost."
        action={
          <Anchor component={Link} to={`/workflows/${id}`} size="sm">
            Back to the editor
          </Anchor>
        }
      />
      {!versions && <Skeleton role="status" height={160} radius="lg" aria-label="Loading the history" />}
      {versions && (
        <TableRegion label="Versions">
          <Table verticalSpacing="xs" horizontalSpacing="md" highlightOnHover aria-label="Versions">
            <TableHead columns={['Version', 'Saved', 'By', 'Message']} />
            <Table.Tbody>
              {versions.map((v) => (
                <Table.Tr key={v.number} aria-current={v.number === open ? 'true' : undefined} bg={v.number === open ? 'indigo.0' : undefined}>
                  <Table.Td fw={550} style={{ whiteSpace: 'nowrap' }}>
                    {v.number}
                    {v.number === current && (
                      <Badge ml={6} size="sm" variant="light" color="green" c="dark.8" tt="none">
                        current
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }} title={exact(v.createdAt)}>
                    {ago(v.createdAt)}
                  </Table.Td>
                  <Table.Td>{authorOf(v)}</Table.Td>
                  <Table.Td>
                    {v.message ?? (
                      <Text span size="sm" c="dimmed">
                        —
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td ta="right">
                    <Button
                      size="compact-sm"
                      variant={v.number === open ? 'filled' : 'default'}
                      onClick={() => choose(v.number, null)}
                      aria-label={`Open version ${v.number}`}
                    >
                      Open
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      {nextCursor && (
        <Button variant="default" size="xs" mt="xs" onClick={() => void more()}>
          Older versions
        </Button>
      )}
      {versions && open && (
        <OpenVersion
          key={`${open}:${other ?? ''}`}
          workflowId={id}
          number={open}
          current={current}
          compare={other}
          choices={versions.map((v) => v.number).filter((n) => n !== open)}
          onCompare={(n) => choose(open, n)}
          onRestore={() => setRestoring(true)}
        />
      )}
      <ConfirmDialog
        opened={restoring}
        onClose={() => setRestoring(false)}
        title={`Restore version ${open ?? ''}?`}
        confirmLabel="Restore this version"
        onConfirm={restore}
      >
        The workflow gets version {open}'s definition back: its steps, edges, trigger and settings. This is saved as a new version (version {(current ?? 0) + 1}
        , “Restored version {open}”): the current version {current} stays in the history, and you can restore it the same way.{' '}
        {workflow?.active ? 'The workflow stays active: its next runs run the restored steps.' : ''}
      </ConfirmDialog>
    </>
  );
}

function OpenVersion({
  workflowId,
  number,
  current,
  compare,
  choices,
  onCompare,
  onRestore,
}: {
  workflowId: string;
  number: number;
  current: number | null;
  compare: number | null;
  choices: number[];
  onCompare: (n: number) => void;
  onRestore: () => void;
}) {
  const [version, setVersion] = useState<WorkflowVersion | null>(null);
  const [against, setAgainst] = useState<WorkflowVersion | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let stop = false;
    Promise.all([api.getWorkflowVersion(workflowId, number), compare ? api.getWorkflowVersion(workflowId, compare) : Promise.resolve(null)]).then(
      ([v, c]) => {
        if (stop) return;
        setVersion(v);
        setAgainst(c);
      },
      (err: unknown) => !stop && setFailed(err instanceof ApiError && err.status === 404 ? `Version ${number} is no longer kept.` : (err as Error).message),
    );
    return () => {
      stop = true;
    };
  }, [workflowId, number, compare]);

  const [older, newer] = against && against.number > number ? [version, against] : [against, version];
  const diff = useMemo(() => (older && newer ? diffDefinitions(older.definition, newer.definition) : null), [older, newer]);
  const label = (n: number) => (n === current ? `version ${n} (current)` : `version ${n}`);

  return (
    <Card withBorder radius="lg" mt="lg" p="md" component="section" aria-labelledby="open-version">
      <Group justify="space-between" wrap="wrap" gap="sm" mb="sm">
        <div>
          <Title order={2} size="h3" id="open-version">
            Version {number}
            {number === current ? ' (current)' : ''}
          </Title>
          {version && (
            <Text size="sm" c="dimmed">
              Saved {exact(version.createdAt)} · {authorOf(version)}
              {version.message ? ` · ${version.message}` : ''}
            </Text>
          )}
        </div>
        <Button
          leftSection={<IconArrowBackUp size={16} />}
          onClick={onRestore}
          disabled={!version || number === current}
          title={number === current ? 'This is the current definition' : undefined}
        >
          Restore this version
        </Button>
      </Group>
      {failed && (
        <Alert color="red" variant="light" role="alert">
          {failed}
        </Alert>
      )}
      {!version && !failed && <Loader size="sm" aria-label="Loading the version" />}
      {version && (
        <Tabs defaultValue="changes" keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="changes">Changes</Tabs.Tab>
            <Tabs.Tab value="canvas">Canvas</Tabs.Tab>
            <Tabs.Tab value="json">JSON</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="changes" pt="md">
            {choices.length === 0 ? (
              <Text size="sm" c="dimmed">
                This is the only version kept: there is nothing to compare it with.
              </Text>
            ) : (
              <Stack gap="sm">
                <NativeSelect
                  label="Compare with"
                  size="xs"
                  w={240}
                  value={compare ? String(compare) : ''}
                  onChange={(e) => onCompare(Number(e.currentTarget.value))}
                  data={choices.map((n) => ({ value: String(n), label: label(n) }))}
                />
                {!diff && <Loader size="sm" aria-label="Comparing" />}
                {diff && older && newer && (
                  <DiffView diff={diff} from={label(older.number)} to={label(newer.number)} older={older.definition} newer={newer.definition} />
                )}
              </Stack>
            )}
          </Tabs.Panel>
          <Tabs.Panel value="canvas" pt="md">
            <ReadOnlyCanvas definition={version.definition} />
          </Tabs.Panel>
          <Tabs.Panel value="json" pt="md">
            <Paper
              withBorder
              p="sm"
              radius="md"
              style={{ maxHeight: 420, overflow: 'auto' }}
              tabIndex={0}
              role="region"
              aria-label={`Version ${number} as JSON`}
            >
              <pre style={{ margin: 0, fontSize: 12 }} data-testid="version-json">
                {JSON.stringify(version.definition, null, 2)}
              </pre>
            </Paper>
          </Tabs.Panel>
        </Tabs>
      )}
    </Card>
  );
}

/** The version's graph on a canvas that can be panned and zoomed, not edited. */
function ReadOnlyCanvas({ definition }: { definition: WorkflowVersionDefinition }) {
  const { nodes, edges } = useMemo(() => {
    const canvas = toCanvas(definition.graph, definition.triggerType);
    return {
      nodes: canvas.nodes.map((n) => ({ ...n, draggable: false, selectable: false, connectable: false, deletable: false }) as AnyNode),
      edges: canvas.edges.map((e): Edge => ({ ...e, deletable: false })),
    };
  }, [definition]);
  return (
    <div role="region" aria-label="Version canvas (read-only)" style={{ height: 360, border: '1px solid var(--mantine-color-gray-3)', borderRadius: 8 }}>
      <ReactFlowProvider>
        <ReactFlow<AnyNode, Edge>
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          deleteKeyCode={null}
          fitView
          fitViewOptions={{ padding: 0.2, maxZoom: 1 }}
          minZoom={0.2}
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={20} color="var(--mantine-color-gray-4)" />
          <Controls showInteractive={false} aria-label="Zoom and fit" />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}

const stepLabel = (n: { id: string; type: string; name?: string | undefined }) => `${n.name || (KIND_LABEL[n.type as StepKind] ?? n.type)} (${n.id})`;

function DiffView({
  diff,
  from,
  to,
  older,
  newer,
}: {
  diff: DefinitionDiff;
  from: string;
  to: string;
  older: WorkflowVersionDefinition;
  newer: WorkflowVersionDefinition;
}) {
  const names = new Map<string, string>([...older.graph.nodes, ...newer.graph.nodes].map((n) => [n.id, stepLabel(n)]));
  const end = (id: string, d: WorkflowVersionDefinition) => (id === 'trigger' ? `${TRIGGER_LABEL[d.triggerType]} trigger` : (names.get(id) ?? id));
  const edgeText = (e: WorkflowEdge, d: WorkflowVersionDefinition) => `${end(e.from, d)} → ${end(e.to, d)}${e.branch ? ` (on “${e.branch}”)` : ''}`;
  if (diff.same)
    return (
      <Text size="sm" data-testid="version-diff">
        No differences between {from} and {to}.
      </Text>
    );
  return (
    <Stack gap="md" data-testid="version-diff">
      <Text size="sm" c="dimmed">
        From {from} to {to}
        {diff.sameApartFromLayout ? ': the same steps and settings, only laid out differently.' : ':'}
      </Text>
      {diff.steps.added.length > 0 && <DiffList title="Steps added" color="green" items={diff.steps.added.map((n) => stepLabel(n))} />}
      {diff.steps.removed.length > 0 && <DiffList title="Steps removed" color="red" items={diff.steps.removed.map((n) => stepLabel(n))} />}
      {diff.steps.changed.length > 0 && (
        <section aria-label="Steps changed">
          <Title order={3} size="h5" mb={6}>
            Steps changed
          </Title>
          <Stack gap="sm">
            {diff.steps.changed.map((s) => (
              <div key={s.id}>
                <Text size="sm" fw={600}>
                  {stepLabel(s)}
                </Text>
                <ChangesTable label={`Changes of ${s.id}`} changes={s.changes} name={(p) => p} />
              </div>
            ))}
          </Stack>
        </section>
      )}
      {diff.edges.added.length > 0 && <DiffList title="Edges added" color="green" items={diff.edges.added.map((e) => edgeText(e, newer))} />}
      {diff.edges.removed.length > 0 && <DiffList title="Edges removed" color="red" items={diff.edges.removed.map((e) => edgeText(e, older))} />}
      {diff.settings.length > 0 && (
        <section aria-label="Settings changed">
          <Title order={3} size="h5" mb={6}>
            Settings changed
          </Title>
          <ChangesTable label="Settings changed" changes={diff.settings} name={settingLabel} />
        </section>
      )}
      {diff.steps.moved.length > 0 && (
        <Text size="sm" c="dimmed">
          Moved on the canvas: {diff.steps.moved.map((id) => end(id, newer)).join(', ')}.
        </Text>
      )}
    </Stack>
  );
}

function DiffList({ title, color, items }: { title: string; color: 'green' | 'red'; items: string[] }) {
  return (
    <section aria-label={title}>
      <Title order={3} size="h5" mb={6}>
        {title}
      </Title>
      <ul style={{ margin: 0, paddingLeft: 20 }}>
        {items.map((t) => (
          <li key={t}>
            <Text span size="sm" px={4} bg={color === 'green' ? 'green.0' : 'red.0'}>
              {color === 'green' ? '+ ' : '− '}
              {t}
            </Text>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ChangesTable({ label, changes, name }: { label: string; changes: ValueChange[]; name: (path: string) => string }) {
  return (
    <div>
      <Table withTableBorder verticalSpacing={4} horizontalSpacing="sm" fz="sm" aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Field</Table.Th>
            <Table.Th>Before</Table.Th>
            <Table.Th>After</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {changes.map((c) => (
            <Table.Tr key={c.path}>
              <Table.Td ff="monospace" style={{ wordBreak: 'break-word' }}>
                {name(c.path)}
              </Table.Td>
              <Table.Td bg="red.0" style={{ wordBreak: 'break-word' }}>
                {showValue(c.before)}
              </Table.Td>
              <Table.Td bg="green.0" style={{ wordBreak: 'break-word' }}>
                {showValue(c.after)}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </div>
  );
}
