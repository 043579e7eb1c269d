import '@xyflow/react/dist/style.css';
import {
  addEdge,
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
  type Connection,
  type Edge,
} from '@xyflow/react';
import { ActionIcon, Alert, Anchor, Badge, Button, Center, Divider, Group, Loader, Menu, ScrollArea, Stack, Switch, Text, TextInput, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconArrowBackUp, IconArrowForwardUp, IconChevronDown, IconDeviceFloppy, IconPlus, IconTrash } from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError, type Project, type Workflow, type WorkflowRun } from '../api.ts';
import { ErrorState } from '../components/States.tsx';
import { Link, setNavigationBlocker } from '../router.tsx';
import { KIND_ICON, nodeTypes, type AnyNode } from '../workflows/canvas-nodes.tsx';
import { FieldsProvider, insertIntoTarget, type InsertTarget } from '../workflows/fields.tsx';
import {
  edgeId,
  emptyForm,
  KIND_LABEL,
  nextId,
  nodeOfError,
  toApiGraph,
  toCanvas,
  TRIGGER_ID,
  upstreamOf,
  type CanvasEdge,
  type CanvasNode,
  type StepData,
  type StepKind,
} from '../workflows/graph.ts';
import { StepForm } from '../workflows/StepForm.tsx';
import { TriggerPanel } from '../workflows/TriggerPanel.tsx';
import { VariablePicker, type PickerSource } from '../workflows/VariablePicker.tsx';

/** How often the open editor asks for a new sample payload and the last run (only while the tab is visible). */
const POLL_MS = 2_000;
const HISTORY_LIMIT = 100;

interface Snapshot {
  nodes: AnyNode[];
  edges: Edge[];
}

export function WorkflowEditorPage({ id }: { id: string }) {
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setWorkflow(await api.getWorkflow(id));
      setFailed(null);
    } catch (err) {
      setFailed(err instanceof ApiError && err.status === 404 ? 'This workflow does not exist, or it is not yours.' : (err as Error).message);
    }
  }, [id]);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    document.title = `${workflow?.name ?? 'Workflow'} · Flowdesk`;
  }, [workflow?.name]);

  if (failed)
    return (
      <Center p="xl">
        <ErrorState title="Could not open the workflow" message={failed} onRetry={() => void load()} />
      </Center>
    );
  if (!workflow)
    return (
      <Center h="100%">
        <Loader aria-label="Loading the workflow" />
      </Center>
    );
  return (
    <ReactFlowProvider>
      <Editor initial={workflow} />
    </ReactFlowProvider>
  );
}

function Editor({ initial }: { initial: Workflow }) {
  const flow = useReactFlow<AnyNode, Edge>();
  const start = useMemo(() => toCanvas(initial.graph, initial.triggerType), [initial]);
  const [workflow, setWorkflow] = useState(initial);
  const [nodes, setNodes, onNodesChange] = useNodesState<AnyNode>(
    start.nodes.map((n) => ({ ...n, ...(n.id === TRIGGER_ID ? { deletable: false } : {}) }) as AnyNode),
  );
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>(start.edges as Edge[]);
  const [name, setName] = useState(initial.name);
  const [executionOrder, setExecutionOrder] = useState(initial.executionOrder);
  const [dirty, setDirty] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [selectedId, setSelectedId] = useState<string>(TRIGGER_ID);
  const [secret, setSecret] = useState<string | null>(null);
  const [lastRun, setLastRun] = useState<WorkflowRun | null>(null);
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [credentials, setCredentials] = useState<string[] | null>(null);
  const [targetLabel, setTargetLabel] = useState<string | null>(null);
  const target = useRef<InsertTarget | null>(null);
  /** The node panel: at phone width it sits below the canvas, and choosing a node scrolls to it. */
  const panel = useRef<HTMLElement | null>(null);
  const revealPanel = () => {
    if (window.matchMedia('(max-width: 48em)').matches) panel.current?.scrollIntoView({ block: 'start', behavior: 'smooth' });
  };
  /** Bumped on every local change of the trigger settings: a poll that started before it is stale. */
  const metaVersion = useRef(0);
  const changeMeta = useCallback((change: Partial<Workflow>) => {
    metaVersion.current++;
    setWorkflow((w) => ({ ...w, ...change }));
  }, []);

  // ---- history (undo/redo): a snapshot of the canvas before each change ----
  const past = useRef<Snapshot[]>([]);
  const future = useRef<Snapshot[]>([]);
  const [, setHistoryTick] = useState(0);
  const lastEdit = useRef<{ key: string; at: number } | null>(null);
  const current = useRef<Snapshot>({ nodes, edges });
  current.current = { nodes, edges };
  /** Records the canvas before a change; typing in one field within a second is one step. */
  const remember = useCallback((key?: string) => {
    const now = Date.now();
    if (key && lastEdit.current?.key === key && now - lastEdit.current.at < 1000) {
      lastEdit.current.at = now;
    } else {
      past.current = [...past.current.slice(-HISTORY_LIMIT + 1), current.current];
      future.current = [];
      lastEdit.current = key ? { key, at: now } : null;
      setHistoryTick((t) => t + 1);
    }
    setDirty(true);
  }, []);
  const restore = useCallback(
    (from: React.MutableRefObject<Snapshot[]>, to: React.MutableRefObject<Snapshot[]>) => {
      const snap = from.current.at(-1);
      if (!snap) return;
      from.current = from.current.slice(0, -1);
      to.current = [...to.current, current.current];
      lastEdit.current = null;
      setNodes(snap.nodes);
      setEdges(snap.edges);
      setDirty(true);
      setHistoryTick((t) => t + 1);
    },
    [setNodes, setEdges],
  );
  const undo = useCallback(() => restore(past, future), [restore]);
  const redo = useCallback(() => restore(future, past), [restore]);

  // ---- unsaved-changes guard ----
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  useEffect(() => {
    setNavigationBlocker(() => !dirtyRef.current || window.confirm('Leave without saving? Your changes to this workflow will be lost.'));
    const onUnload = (e: BeforeUnloadEvent) => {
      if (!dirtyRef.current) return;
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', onUnload);
    return () => {
      setNavigationBlocker(null);
      window.removeEventListener('beforeunload', onUnload);
    };
  }, []);

  // ---- what the panel needs from elsewhere ----
  useEffect(() => {
    void api.listProjects().then(setProjects, () => setProjects([]));
    void api.listCredentialNames().then(setCredentials);
  }, []);

  // Live: a new sample payload and the last run, polled while the tab is visible (no SSE endpoint exists).
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      if (document.visibilityState !== 'visible') return;
      const version = metaVersion.current;
      try {
        const [fresh, runs] = await Promise.all([api.getWorkflow(initial.id), api.listRuns(initial.id, 1).catch(() => null)]);
        if (stop) return;
        const meta = version === metaVersion.current ? { active: fresh.active, webhook: fresh.webhook, triggerConfig: fresh.triggerConfig } : {};
        setWorkflow((w) => ({ ...w, samplePayload: fresh.samplePayload, samplePayloadAt: fresh.samplePayloadAt, ...meta }));
        if (runs) setLastRun(runs[0] ?? null);
      } catch {
        // the next tick tries again
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), POLL_MS);
    const onVisible = () => void tick();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stop = true;
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [initial.id]);

  // ---- editing the canvas ----
  const selected = nodes.find((n) => n.id === selectedId) ?? nodes.find((n) => n.id === TRIGGER_ID)!;

  const updateData = useCallback(
    (nodeId: string, data: StepData, field: string) => {
      remember(`${nodeId}:${field}`);
      setNodes((ns) => ns.map((n) => (n.id === nodeId ? ({ ...n, data: { ...data, error: undefined } } as AnyNode) : n)));
    },
    [remember, setNodes],
  );

  /** Adds a step after the selected node (connected to it, on a condition's free branch), as n8n does. */
  const addStep = (kind: StepKind) => {
    remember();
    const id = nextId(kind, nodes.map((n) => n.id));
    const from = selected;
    const outgoing = edges.filter((e) => e.source === from.id);
    const position = { x: from.position.x + 280, y: from.position.y + outgoing.length * 140 };
    const node = { id, type: 'step', position, data: emptyForm(kind), selected: true } as AnyNode;
    const branch = from.data.kind === 'condition' ? (outgoing.some((e) => e.sourceHandle === 'true') ? 'false' : 'true') : null;
    setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), node]);
    if (!(from.data.kind === 'condition' && outgoing.length >= 2)) {
      setEdges((es) => [...es, { id: edgeId(from.id, id, branch), source: from.id, target: id, sourceHandle: branch }]);
    }
    setSelectedId(id);
    // Keep the whole graph in view as it grows (after React Flow measured the new node).
    setTimeout(() => void flow.fitView({ padding: 0.3, maxZoom: 1, duration: 200 }), 50);
  };

  const deleteNode = (nodeId: string) => {
    if (nodeId === TRIGGER_ID) return;
    remember();
    setNodes((ns) => ns.filter((n) => n.id !== nodeId));
    setEdges((es) => es.filter((e) => e.source !== nodeId && e.target !== nodeId));
    setSelectedId(TRIGGER_ID);
  };

  const onConnect = useCallback(
    (c: Connection) => {
      if (c.source === c.target) return;
      remember();
      setEdges((es) => addEdge({ ...c, id: edgeId(c.source, c.target, c.sourceHandle) }, es));
    },
    [remember, setEdges],
  );

  // ---- keyboard: undo/redo outside text fields (fields keep their own undo) ----
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
      if (!(e.ctrlKey || e.metaKey)) return;
      const k = e.key.toLowerCase();
      if (k === 'z' && !e.shiftKey) (e.preventDefault(), undo());
      else if ((k === 'z' && e.shiftKey) || k === 'y') (e.preventDefault(), redo());
      else if (k === 's') (e.preventDefault(), void save());
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  // ---- save ----
  const markErrors = (errors: Record<string, string>) =>
    setNodes((ns) => ns.map((n) => ({ ...n, data: { ...n.data, error: errors[n.id] } }) as AnyNode));

  const save = async (): Promise<boolean> => {
    const { graph, problems } = toApiGraph(nodes as CanvasNode[], edges as CanvasEdge[]);
    setSaveError(null);
    if (Object.keys(problems).length) {
      markErrors(problems);
      setSelectedId(Object.keys(problems)[0]!);
      setSaveError('Fix the marked steps, then save again.');
      return false;
    }
    setSaving(true);
    try {
      const saved = await api.updateWorkflow(workflow.id, { name: name.trim() || workflow.name, graph, executionOrder });
      setWorkflow(saved);
      markErrors({});
      setDirty(false);
      notifications.show({ color: 'green', message: 'Workflow saved.' });
      return true;
    } catch (err) {
      const message = (err as Error).message;
      const nodeId = err instanceof ApiError && err.status === 400 ? nodeOfError(message, graph) : null;
      if (nodeId) {
        markErrors({ [nodeId]: message.replace(/^body\.graph(\.nodes\.\d+)?\s*/, '') });
        setSelectedId(nodeId);
        setSaveError(`Not saved: a step has a problem (${nodeId}).`);
      } else setSaveError(`Not saved: ${message}`);
      return false;
    } finally {
      setSaving(false);
    }
  };

  const setActive = async (active: boolean) => {
    if (active && dirty && !(await save())) return;
    const was = workflow.active;
    changeMeta({ active });
    try {
      const saved = await api.updateWorkflow(workflow.id, { active });
      changeMeta({ active: saved.active });
      notifications.show({ color: 'green', message: active ? 'Workflow activated: its webhook now starts runs.' : 'Workflow deactivated: its webhook answers 404.' });
    } catch (err) {
      changeMeta({ active: was });
      notifications.show({ color: 'red', title: `Could not ${active ? 'activate' : 'deactivate'}`, message: (err as Error).message });
    }
  };

  // ---- the variable picker's sources ----
  const nodeSources = useMemo((): PickerSource[] => {
    if (selected.id === TRIGGER_ID) return [];
    const before = new Set(upstreamOf(selected.id, edges));
    return nodes
      .filter((n) => before.has(n.id) && n.data.kind === 'http_request')
      .map((n) => {
        const step = lastRun?.steps.find((s) => s.nodeId === n.id && s.output != null);
        return step
          ? { root: `nodes.${n.id}`, title: `${n.data.name || KIND_LABEL.http_request} (${n.id})`, value: step.output, note: 'last run' }
          : { root: `nodes.${n.id}`, title: `${n.data.name || KIND_LABEL.http_request} (${n.id})`, value: { status: 200, body: {} }, note: 'not run yet' };
      });
  }, [selected.id, nodes, edges, lastRun]);
  const scope = useMemo(
    () => ({
      trigger: workflow.samplePayload,
      nodes: Object.fromEntries((lastRun?.steps ?? []).filter((s) => s.output != null).map((s) => [s.nodeId, s.output])),
    }),
    [workflow.samplePayload, lastRun],
  );
  const pick = (text: string) => {
    if (!insertIntoTarget(target.current, text)) notifications.show({ message: 'Click into a field of the step first, then pick a variable.' });
  };

  const stepTitle = selected.data.kind === 'trigger' ? 'Webhook trigger' : KIND_LABEL[selected.data.kind];

  return (
    <>
      <Group px="md" py={10} gap="sm" justify="space-between" wrap="wrap" style={{ borderBottom: '1px solid var(--mantine-color-gray-3)', background: 'white' }}>
        <Group gap="sm" wrap="nowrap" style={{ minWidth: 0, flex: 1 }}>
          <Anchor component={Link} to="/workflows" size="sm" c="indigo.8">
            Workflows
          </Anchor>
          <Text c="dimmed" aria-hidden>
            /
          </Text>
          <h1 style={{ margin: 0, flex: '0 1 320px', minWidth: 120 }}>
            <TextInput
              aria-label="Workflow name"
              value={name}
              onChange={(e) => {
                setName(e.currentTarget.value);
                setDirty(true);
              }}
              variant="unstyled"
              styles={{ input: { fontWeight: 700, fontSize: 18 } }}
              maxLength={200}
            />
          </h1>
          {dirty && (
            <Badge variant="light" color="yellow" c="dark.8" tt="none">
              Unsaved changes
            </Badge>
          )}
        </Group>
        <Group gap="xs" wrap="wrap">
          <Button component={Link} to={`/workflows/${workflow.id}/runs`} variant="subtle" size="sm">
            Runs
          </Button>
          <Switch
            label="Active"
            checked={workflow.active}
            onChange={(e) => void setActive(e.currentTarget.checked)}
            color="green"
          />
          <Divider orientation="vertical" />
          <Tooltip label="Undo (Ctrl+Z)">
            <ActionIcon variant="default" size="lg" aria-label="Undo" onClick={undo} disabled={past.current.length === 0}>
              <IconArrowBackUp size={18} />
            </ActionIcon>
          </Tooltip>
          <Tooltip label="Redo (Ctrl+Shift+Z)">
            <ActionIcon variant="default" size="lg" aria-label="Redo" onClick={redo} disabled={future.current.length === 0}>
              <IconArrowForwardUp size={18} />
            </ActionIcon>
          </Tooltip>
          <Menu position="bottom-end" withinPortal>
            <Menu.Target>
              <Button variant="default" leftSection={<IconPlus size={16} />} rightSection={<IconChevronDown size={14} />}>
                Add step
              </Button>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>After “{selected.data.name || (selected.id === TRIGGER_ID ? 'Webhook' : selected.id)}”</Menu.Label>
              {(['condition', 'http_request', 'create_task'] as StepKind[]).map((k) => (
                <Menu.Item key={k} leftSection={KIND_ICON[k]} onClick={() => addStep(k)}>
                  {KIND_LABEL[k]}
                </Menu.Item>
              ))}
            </Menu.Dropdown>
          </Menu>
          <Button leftSection={<IconDeviceFloppy size={16} />} onClick={() => void save()} loading={saving} disabled={!dirty}>
            Save
          </Button>
        </Group>
      </Group>
      {saveError && (
        <Alert color="red" variant="light" radius={0} py={8} role="alert" data-testid="save-error">
          {saveError}
        </Alert>
      )}
      <div className="fd-editor-body">
        <div className="fd-editor-canvas" role="region" aria-label="Workflow canvas">
          <ReactFlow<AnyNode, Edge>
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onNodeClick={(_e, n) => {
              setSelectedId(n.id);
              revealPanel();
            }}
            // Keyboard selection (Tab to a node, Enter) opens its panel as a click does.
            onSelectionChange={({ nodes: chosen }) => {
              if (chosen.length === 1) setSelectedId(chosen[0]!.id);
            }}
            onNodeDragStart={() => remember()}
            onNodeDragStop={() => setDirty(true)}
            onBeforeDelete={async ({ nodes: gone }) => {
              if (gone.some((n) => n.id === TRIGGER_ID)) return false;
              remember();
              if (gone.some((n) => n.id === selectedId)) setSelectedId(TRIGGER_ID);
              return true;
            }}
            deleteKeyCode={['Delete', 'Backspace']}
            fitView
            fitViewOptions={{ maxZoom: 1, padding: 0.3 }}
            defaultEdgeOptions={{ style: { strokeWidth: 2 } }}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={20} color="var(--mantine-color-gray-4)" />
            <Controls showInteractive={false} aria-label="Zoom and fit" />
            <MiniMap pannable zoomable ariaLabel="Overview of the canvas" style={{ width: 140, height: 90 }} />
          </ReactFlow>
        </div>
        <aside aria-label="Node panel" className="fd-editor-panel" ref={panel}>
          <Group px="md" py="sm" justify="space-between" wrap="nowrap" style={{ borderBottom: '1px solid var(--mantine-color-gray-2)' }}>
            <Group gap={8} wrap="nowrap">
              <span aria-hidden style={{ display: 'flex' }}>
                {KIND_ICON[selected.data.kind]}
              </span>
              <div>
                <h2 style={{ margin: 0, fontSize: 16 }}>{stepTitle}</h2>
                <Text size="xs" c="dimmed" ff="monospace">
                  {selected.id}
                </Text>
              </div>
            </Group>
            {selected.id !== TRIGGER_ID && (
              <Tooltip label="Delete step (Delete key on the canvas)">
                <ActionIcon variant="subtle" color="red" aria-label={`Delete step ${selected.id}`} onClick={() => deleteNode(selected.id)}>
                  <IconTrash size={18} />
                </ActionIcon>
              </Tooltip>
            )}
          </Group>
          <ScrollArea style={{ flex: 1 }} type="auto">
            <Stack p="md" gap="md">
              {selected.data.error && (
                <Alert color="red" variant="light" role="alert" title="The server refused this step" data-testid="panel-error">
                  {selected.data.error}
                </Alert>
              )}
              <FieldsProvider value={{ target, scope, onTarget: setTargetLabel }}>
                {selected.data.kind === 'trigger' ? (
                  <TriggerPanel
                    workflow={workflow}
                    secret={secret}
                    onSecret={setSecret}
                    onChanged={(w) => changeMeta({ webhook: w.webhook, triggerConfig: w.triggerConfig })}
                    executionOrder={executionOrder}
                    onExecutionOrder={(o) => {
                      setExecutionOrder(o);
                      setDirty(true);
                    }}
                  />
                ) : (
                  <>
                    <TextInput
                      label="Step name"
                      placeholder={KIND_LABEL[selected.data.kind]}
                      value={selected.data.name}
                      onChange={(e) => updateData(selected.id, { ...(selected.data as StepData), name: e.currentTarget.value }, 'name')}
                    />
                    <StepForm key={selected.id} data={selected.data} projects={projects} onChange={(d) => updateData(selected.id, d, 'form')} />
                  </>
                )}
                <Divider />
                <VariablePicker
                  sample={workflow.samplePayload}
                  sampleAt={workflow.samplePayloadAt}
                  webhookUrl={workflow.webhook?.url ?? null}
                  secret={secret}
                  active={workflow.active}
                  nodeSources={nodeSources}
                  credentials={credentials}
                  targetLabel={selected.id === TRIGGER_ID ? null : targetLabel}
                  onPick={pick}
                />
              </FieldsProvider>
            </Stack>
          </ScrollArea>
        </aside>
      </div>
    </>
  );
}
