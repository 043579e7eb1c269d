import '@xyflow/react/dist/style.css';
import {
  addEdge,
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
  type Connection,
  type Edge,
} from '@xyflow/react';
import {
  ActionIcon,
  Alert,
  Anchor,
  Badge,
  Button,
  Center,
  Divider,
  Group,
  Loader,
  Menu,
  ScrollArea,
  Stack,
  Switch,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMediaQuery } from '@mantine/hooks';
import {
  IconArrowBackUp,
  IconArrowForwardUp,
  IconCheck,
  IconChevronDown,
  IconDeviceFloppy,
  IconLayoutDistributeVertical,
  IconDownload,
  IconHistory,
  IconPlayerPlay,
  IconPlus,
  IconTrash,
} from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError, type Project, type Workflow, type WorkflowRun } from '../api.ts';
import { ErrorState } from '../components/States.tsx';
import { ThrottleBadge } from '../components/OwnerUsage.tsx';
import { Link, navigate } from '../router.tsx';
import { kindIcon, nodeTypes, outputsOf, TRIGGER_ICON, type AnyNode } from '../workflows/canvas-nodes.tsx';
import { EdgeActionsContext, edgeTypes, type EdgeActions } from '../workflows/canvas-edge.tsx';
import { freeSpot, layout, NODE_SIZE } from '../workflows/layout.ts';
import { FieldsProvider, insertIntoTarget, type InsertTarget } from '../workflows/fields.tsx';
import { edgeId, emptyForm, KIND_LABEL, nextId, remapBranchEdges, STEP_KINDS, toCanvas, TRIGGER_ID, type StepData, type StepKind } from '../workflows/graph.ts';
import { StepForm } from '../workflows/StepForm.tsx';
import { ErrorWorkflowSelect, OnErrorSelect, RetrySettings } from '../workflows/ErrorSettings.tsx';
import { RetentionSettings } from '../workflows/RetentionSettings.tsx';
import { RunNowDialog } from '../workflows/RunNowDialog.tsx';
import { downloadWorkflow } from '../workflows/WorkflowFile.tsx';
import { RunStep } from '../workflows/run-step.tsx';
import { SampleControls } from '../workflows/sample.tsx';
import { dryRunOutputs, mergeKnown, useDryRun } from '../workflows/dry-run.ts';
import { defaultTriggerConfig, TriggerPanel, type TriggerDraft } from '../workflows/TriggerPanel.tsx';
import { checkSchedule, TRIGGER_LABEL, triggerSample, type TriggerType } from '../workflows/triggers.ts';
import { VariablePicker } from '../workflows/VariablePicker.tsx';
import { knownOutputs, outputsScope, pickerSources, stepScope } from '../workflows/picker-sources.ts';
import { useEditorShortcuts, useHistory, useLeaveGuard, useSave, useWorkflowPolling } from '../workflows/editor-hooks.ts';

/**
 * Fitting the graph never zooms out below 0.8 (node text stays ≥ 9.6 px): with 4–5 steps a fit to
 * the whole graph shrank it to ~7 px text; past that the canvas pans (and the zoom buttons still go
 * further out for an overview).
 */
const FIT_VIEW = { maxZoom: 1, minZoom: 0.8, padding: 0.3 };
/**
 * At phone width a 390 px canvas holds about 1.5 cards at a readable size, so the editor opens at
 * the start of the flow at 0.8 (the trigger at the left edge, the next card peeking in: drag to
 * follow it), and the "fit view" button shows the whole graph as an overview (down to 0.2).
 */
const FIT_VIEW_PHONE = { maxZoom: 1, minZoom: 0.2, padding: 0.1 };
const PHONE_OPEN_ZOOM = 0.8;
const PHONE_OPEN_MARGIN = 16;
/** The zoom buttons stop where a card's name is still readable on a desktop (14 px × 0.45 ≈ 6 px). */
const MIN_ZOOM = 0.45;
const PHONE = '(max-width: 48em)';

/** The outputs of a node as its handles name them (the trigger's one output is `null`). */
const outputsOfNode = (n: AnyNode): (string | null)[] => (n.data.kind === 'trigger' ? [null] : outputsOf(n.data));

/** New positions for the canvas by the layout library, outputs in the order of their handles. */
function tidied(nodes: AnyNode[], edges: Edge[]): AnyNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const at = layout(nodes, edges, (e) => {
    const n = byId.get(e.source);
    return n ? outputsOfNode(n).indexOf(e.sourceHandle ?? null) : 0;
  });
  return nodes.map((n) => ({ ...n, position: at.get(n.id) ?? n.position }));
}

export function WorkflowEditorPage({ id }: { id: string }) {
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const load = useCallback(
    () =>
      api.getWorkflow(id).then(
        (w) => {
          setWorkflow(w);
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
  const start = useMemo(() => {
    const canvas = toCanvas(initial.graph, initial.triggerType);
    const nodes = canvas.nodes.map((n) => ({ ...n, ...(n.id === TRIGGER_ID ? { deletable: false } : {}) }) as AnyNode);
    const edges: Edge[] = canvas.edges.map((e) => ({ ...e, type: 'step' }));
    // A graph saved without positions (a template, one made through the API) opens laid out.
    return { nodes: initial.graph.nodes.some((n) => !n.position) ? tidied(nodes, edges) : nodes, edges };
  }, [initial]);
  const phone = useMediaQuery(PHONE, typeof window !== 'undefined' && window.matchMedia(PHONE).matches);
  const fitOptions = phone ? FIT_VIEW_PHONE : FIT_VIEW;
  const [workflow, setWorkflow] = useState(initial);
  const [nodes, setNodes, onNodesChange] = useNodesState<AnyNode>(start.nodes);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>(start.edges);
  /** The output of the selected step that Add step hangs the new step on (when it has several). */
  const [addOutput, setAddOutput] = useState<string | null>(null);
  const [name, setName] = useState(initial.name);
  const [executionOrder, setExecutionOrder] = useState(initial.executionOrder);
  const [errorWorkflowId, setErrorWorkflowId] = useState(initial.errorWorkflowId ?? null);
  const [retention, setRetention] = useState(initial.retention ?? null);
  const [dirty, setDirty] = useState(false);
  const [selectedId, setSelectedId] = useState<string>(TRIGGER_ID);
  const [secret, setSecret] = useState<string | null>(null);
  const [runs, setRuns] = useState<WorkflowRun[]>([]);
  const lastRun = runs[0] ?? null;
  /** Outputs of Run this step in this visit, by node id: the picker shows them before any run has. */
  const [tested, setTested] = useState<Record<string, unknown>>({});
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [credentials, setCredentials] = useState<string[] | null>(null);
  const [targetLabel, setTargetLabel] = useState<string | null>(null);
  /** Schedule, note or entity settings being edited (saved with the workflow). */
  const [triggerDraft, setTriggerDraft] = useState<TriggerDraft | null>(null);
  const [runNowOpen, setRunNowOpen] = useState(false);
  const target = useRef<InsertTarget | null>(null);
  const setTarget = useCallback((t: InsertTarget) => {
    target.current = t;
  }, []);
  // A newly selected node's first field takes over from a field no longer on screen (the last node's).
  const offerTarget = useCallback((t: InsertTarget) => {
    if (target.current?.el.isConnected) return;
    target.current = t;
    setTargetLabel(t.label);
  }, []);
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

  const { remember, undo, redo, historySize } = useHistory(nodes, edges, setNodes, setEdges, setDirty);
  useLeaveGuard(dirty);

  // ---- what the panel needs from elsewhere ----
  useEffect(() => {
    void api.listProjects().then(setProjects, () => setProjects([]));
    void api.listCredentialNames().then(setCredentials);
  }, []);

  useWorkflowPolling(initial.id, metaVersion, setWorkflow, setRuns);

  // ---- editing the canvas ----
  const selected = nodes.find((n) => n.id === selectedId) ?? nodes.find((n) => n.id === TRIGGER_ID)!;

  const updateData = useCallback(
    (nodeId: string, data: StepData, field: string) => {
      remember(`${nodeId}:${field}`);
      setNodes((ns) => ns.map((n) => (n.id === nodeId ? ({ ...n, data: { ...data, error: undefined } } as AnyNode) : n)));
    },
    [remember, setNodes],
  );

  const selectedOutputs = outputsOfNode(selected);
  /** The output Add step uses: the one chosen in its menu, else the selected step's first free one. */
  const addOutputOf = (from: AnyNode): string | null => {
    const outputs = outputsOfNode(from);
    if (outputs.length === 1) return outputs[0]!;
    if (addOutput !== null && outputs.includes(addOutput)) return addOutput;
    return outputs.find((o) => !edges.some((e) => e.source === from.id && (e.sourceHandle ?? null) === o)) ?? outputs[0]!;
  };
  // Fitted once the cards are measured (React Flow's own first fit can run before the canvas has its
  // phone-width size, leaving the graph half off screen).
  const measured = useNodesInitialized();
  const fittedOnce = useRef(false);
  const canvasRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!measured || fittedOnce.current) return;
    fittedOnce.current = true;
    const trigger = flow.getNode(TRIGGER_ID);
    const box = canvasRef.current?.getBoundingClientRect();
    if (!phone || !trigger || !box) {
      void flow.fitView(fitOptions);
      return;
    }
    // Phone: the start of the flow at a readable zoom, the trigger's card at the left edge and
    // vertically centred (the whole graph is one "fit view" tap away).
    const z = PHONE_OPEN_ZOOM;
    const height = trigger.measured?.height ?? NODE_SIZE.height;
    void flow.setViewport({
      x: PHONE_OPEN_MARGIN - trigger.position.x * z,
      y: box.height / 2 - (trigger.position.y + height / 2) * z,
      zoom: z,
    });
  }, [measured, flow, fitOptions, phone]);
  const fitSoon = () => setTimeout(() => void flow.fitView({ ...fitOptions, duration: 200 }), 50);

  /** Adds a step after the selected node, on the output chosen in the menu (as n8n does); never on top of another step. */
  const addStep = (kind: StepKind) => {
    remember();
    const id = nextId(
      kind,
      nodes.map((n) => n.id),
    );
    const from = selected;
    const output = addOutputOf(from);
    const position = freeSpot({ x: from.position.x + NODE_SIZE.width + 90, y: from.position.y }, nodes);
    const node = { id, type: 'step', position, data: emptyForm(kind), selected: true } as AnyNode;
    setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), node]);
    setEdges((es) => [...es, { id: edgeId(from.id, id, output), source: from.id, target: id, sourceHandle: output, type: 'step' }]);
    setSelectedId(id);
    setAddOutput(null);
    // Keep the whole graph in view as it grows (after React Flow measured the new node); at phone
    // width the new step centred at a readable zoom instead.
    if (phone) setTimeout(() => void flow.fitView({ nodes: [{ id }], minZoom: PHONE_OPEN_ZOOM, maxZoom: PHONE_OPEN_ZOOM, duration: 200 }), 50);
    else fitSoon();
  };

  /** The edge's buttons: insert a step between its ends (on the edge's output, then the new step's first), delete it. */
  const edgeActions: EdgeActions = {
    insert: (edgeIdToSplit, kind) => {
      const edge = edges.find((e) => e.id === edgeIdToSplit);
      if (!edge) return;
      const from = nodes.find((n) => n.id === edge.source);
      const to = nodes.find((n) => n.id === edge.target);
      if (!from || !to) return;
      remember();
      const id = nextId(
        kind,
        nodes.map((n) => n.id),
      );
      const data = emptyForm(kind);
      const out = outputsOf(data)[0] ?? null;
      const mid = { x: Math.round((from.position.x + to.position.x) / 2), y: Math.round((from.position.y + to.position.y) / 2) };
      const node = { id, type: 'step', position: freeSpot(mid, nodes), data, selected: true } as AnyNode;
      setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), node]);
      setEdges((es) => [
        ...es.filter((e) => e.id !== edge.id),
        { id: edgeId(edge.source, id, edge.sourceHandle), source: edge.source, target: id, sourceHandle: edge.sourceHandle ?? null, type: 'step' },
        { id: edgeId(id, edge.target, out), source: id, target: edge.target, sourceHandle: out, type: 'step' },
      ]);
      setSelectedId(id);
    },
    remove: (edgeIdToDelete) => {
      remember();
      setEdges((es) => es.filter((e) => e.id !== edgeIdToDelete));
    },
  };

  /** "Tidy up": the whole graph laid out left to right by the layout library, then fitted. */
  const tidy = () => {
    remember();
    setNodes((ns) => tidied(ns, edges));
    fitSoon();
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
      setEdges((es) => addEdge({ ...c, id: edgeId(c.source, c.target, c.sourceHandle), type: 'step' }, es));
    },
    [remember, setEdges],
  );

  const { save, saving, saveError } = useSave({
    workflow,
    nodes,
    edges,
    name,
    executionOrder,
    errorWorkflowId,
    retention,
    triggerDraft,
    setNodes,
    select: setSelectedId,
    onSaved: (saved) => {
      metaVersion.current++;
      setWorkflow(saved);
      setTriggerDraft(null);
      setDirty(false);
    },
  });

  const setActive = async (active: boolean) => {
    if (active && dirty && !(await save())) return;
    const was = workflow.active;
    changeMeta({ active });
    try {
      const saved = await api.updateWorkflow(workflow.id, { active });
      changeMeta({ active: saved.active });
      notifications.show({ color: 'green', message: activatedText(workflow.triggerType, active) });
    } catch (err) {
      changeMeta({ active: was });
      notifications.show({ color: 'red', title: `Could not ${active ? 'activate' : 'deactivate'}`, message: (err as Error).message });
    }
  };

  useEditorShortcuts({ save, undo, redo });

  /** Another trigger type: saved at once with its default settings (a draft of the old type is dropped). */
  const changeType = async (triggerType: TriggerType) => {
    try {
      const saved = await api.updateWorkflow(workflow.id, { triggerType, triggerConfig: defaultTriggerConfig(triggerType) });
      setTriggerDraft(null);
      changeMeta({ triggerType: saved.triggerType, triggerConfig: saved.triggerConfig, webhook: saved.webhook, active: saved.active });
      setSecret(null);
      notifications.show({ color: 'green', message: `The workflow now starts by its ${TRIGGER_LABEL[triggerType].toLowerCase()} trigger.` });
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not change the trigger', message: (err as Error).message });
    }
  };

  // ---- the canvas shows the trigger as it is now (type, and the schedule in words) ----
  const triggerConfig = triggerDraft?.config ?? workflow.triggerConfig;
  const triggerSummary = useMemo(() => {
    if (workflow.triggerType !== 'schedule' || typeof triggerConfig.cron !== 'string') return undefined;
    const check = checkSchedule(triggerConfig.cron, typeof triggerConfig.timezone === 'string' ? triggerConfig.timezone : 'UTC', new Date(), 1);
    return check.ok ? check.description : 'Invalid schedule';
  }, [workflow.triggerType, triggerConfig]);
  const shownNodes = useMemo(
    () =>
      nodes.map((n) =>
        n.id === TRIGGER_ID && n.data.kind === 'trigger'
          ? ({ ...n, data: { ...n.data, triggerType: workflow.triggerType, summary: triggerSummary } } as AnyNode)
          : n,
      ),
    [nodes, workflow.triggerType, triggerSummary],
  );

  // ---- the variable picker's sources ----
  const pinned = !!workflow.samplePin && !!workflow.samplePayload;
  const trigger = useMemo(
    () =>
      workflow.triggerType === 'webhook'
        ? null
        : pinned
          ? { value: workflow.samplePayload!, fromRun: false, pinned: true }
          : triggerSample(workflow.triggerType, triggerConfig, lastRun, workflow.samplePayload),
    [workflow.triggerType, triggerConfig, lastRun, workflow.samplePayload, pinned],
  );
  // The sample: pinned (a template's, typed, a chosen delivery) or the last delivery.
  const sample = trigger ? trigger.value : workflow.samplePayload;
  const fromRuns = useMemo(() => knownOutputs(runs, tested), [runs, tested]);
  // Later steps' previews before any run: the engine's dry run of the side-effect-free steps on the
  // sample — a real one (pinned, or a delivery), never a trigger type's documented example.
  const dryRun = useDryRun(workflow.id, nodes, edges, workflow.samplePayload ? sample : null, fromRuns);
  const known = useMemo(() => mergeKnown(fromRuns, dryRunOutputs(dryRun), pinned), [fromRuns, dryRun, pinned]);
  const baseScope = useMemo(() => ({ trigger: sample, nodes: outputsScope(known) }), [sample, known]);
  // Inside a For each's body the previews see `item` and `index` as the picker shows them.
  const scope = useMemo(() => stepScope(selectedId, nodes, edges, baseScope), [selectedId, nodes, edges, baseScope]);
  const nodeSources = pickerSources(selected.id, nodes, edges, baseScope, known);
  const pick = (text: string) => {
    if (!insertIntoTarget(target.current, text)) notifications.show({ message: 'Click into a field of the step first, then pick a variable.' });
  };

  const stepTitle = selected.data.kind === 'trigger' ? `${TRIGGER_LABEL[workflow.triggerType]} trigger` : KIND_LABEL[selected.data.kind];

  return (
    <>
      <Group
        px="md"
        py={10}
        gap="sm"
        justify="space-between"
        wrap="wrap"
        style={{ borderBottom: '1px solid var(--mantine-color-gray-3)', background: 'white' }}
      >
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
            <Badge variant="light" color="yellow" c="dark.8" tt="none" style={{ flexShrink: 0 }}>
              Unsaved changes
            </Badge>
          )}
          <ThrottleBadge workflowId={workflow.id} />
        </Group>
        <Group gap="xs" wrap="wrap">
          <Button component={Link} to={`/workflows/${workflow.id}/runs`} variant="subtle" size="sm">
            Runs
          </Button>
          <Button
            component={Link}
            to={`/workflows/${workflow.id}/history`}
            variant="subtle"
            size="sm"
            leftSection={<IconHistory size={16} />}
            title={dirty ? 'Versions of the saved workflow: save first to keep your changes' : 'Every saved version of this workflow'}
          >
            History
          </Button>
          <Button
            variant="subtle"
            size="sm"
            leftSection={<IconDownload size={16} />}
            title={dirty ? 'Exports the saved workflow: save first to include your changes' : 'Download this workflow as a file (no secrets)'}
            onClick={() =>
              void downloadWorkflow(workflow).catch((err: unknown) =>
                notifications.show({ color: 'red', title: 'Could not export the workflow', message: err instanceof Error ? err.message : String(err) }),
              )
            }
          >
            Export
          </Button>
          <Button variant="light" size="sm" leftSection={<IconPlayerPlay size={16} />} onClick={() => setRunNowOpen(true)}>
            Run now
          </Button>
          <Switch label="Active" checked={workflow.active} onChange={(e) => void setActive(e.currentTarget.checked)} color="green" />
          <Divider orientation="vertical" />
          <Tooltip label="Undo (Ctrl+Z)">
            <ActionIcon variant="default" size="lg" aria-label="Undo" onClick={undo} disabled={historySize.past === 0}>
              <IconArrowBackUp size={18} />
            </ActionIcon>
          </Tooltip>
          <Tooltip label="Redo (Ctrl+Shift+Z)">
            <ActionIcon variant="default" size="lg" aria-label="Redo" onClick={redo} disabled={historySize.future === 0}>
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
              <Menu.Label>After “{selected.data.name || (selected.id === TRIGGER_ID ? TRIGGER_LABEL[workflow.triggerType] : selected.id)}”</Menu.Label>
              {selectedOutputs.length > 1 && (
                <>
                  <Menu.Label>On its output</Menu.Label>
                  <Group gap={4} px="xs" pb={6} role="radiogroup" aria-label="Output to add the step on" style={{ maxWidth: 260 }}>
                    {selectedOutputs.map((o) => {
                      const chosen = addOutputOf(selected) === o;
                      return (
                        <Button
                          key={o ?? 'main'}
                          size="compact-xs"
                          role="radio"
                          aria-checked={chosen}
                          variant={chosen ? 'filled' : 'default'}
                          leftSection={chosen ? <IconCheck size={12} /> : undefined}
                          onClick={() => setAddOutput(o)}
                        >
                          {o}
                        </Button>
                      );
                    })}
                  </Group>
                  <Menu.Divider />
                </>
              )}
              {STEP_KINDS.map((k) => (
                <Menu.Item key={k} leftSection={kindIcon(k)} onClick={() => addStep(k)}>
                  {KIND_LABEL[k]}
                </Menu.Item>
              ))}
            </Menu.Dropdown>
          </Menu>
          <Tooltip label="Lay the steps out left to right">
            <Button variant="default" leftSection={<IconLayoutDistributeVertical size={16} />} onClick={tidy}>
              Tidy up
            </Button>
          </Tooltip>
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
        <div className="fd-editor-canvas" role="region" aria-label="Workflow canvas" ref={canvasRef}>
          <EdgeActionsContext.Provider value={edgeActions}>
            <ReactFlow<AnyNode, Edge>
              nodes={shownNodes}
              edges={edges}
              nodeTypes={nodeTypes}
              edgeTypes={edgeTypes}
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
                // An edge alone (selected, Delete key) is deleted too.
                remember();
                if (gone.some((n) => n.id === selectedId)) setSelectedId(TRIGGER_ID);
                return true;
              }}
              deleteKeyCode={['Delete', 'Backspace']}
              fitView={!phone}
              fitViewOptions={fitOptions}
              minZoom={phone ? FIT_VIEW_PHONE.minZoom : MIN_ZOOM}
              defaultEdgeOptions={{ type: 'step', style: { strokeWidth: 2 } }}
              proOptions={{ hideAttribution: true }}
            >
              <Background gap={20} color="var(--mantine-color-gray-4)" />
              <Controls showInteractive={false} aria-label="Zoom and fit" />
              {!phone && <MiniMap pannable zoomable ariaLabel="Overview of the canvas" style={{ width: 140, height: 90 }} />}
            </ReactFlow>
          </EdgeActionsContext.Provider>
        </div>
        <aside aria-label="Node panel" className="fd-editor-panel" ref={panel}>
          <Group px="md" py="sm" justify="space-between" wrap="nowrap" style={{ borderBottom: '1px solid var(--mantine-color-gray-2)' }}>
            <Group gap={8} wrap="nowrap">
              <span aria-hidden style={{ display: 'flex' }}>
                {selected.data.kind === 'trigger' ? TRIGGER_ICON[workflow.triggerType] : kindIcon(selected.data.kind)}
              </span>
              <div>
                <h2 style={{ margin: 0, fontSize: 16 }}>{stepTitle}</h2>
                <Text size="xs" c="dimmed" ff="monospace">
                  {selected.id}
                </Text>
              </div>
            </Group>
            <Group gap={6} wrap="nowrap">
              {selected.data.kind !== 'trigger' && selected.data.kind !== 'verify_signature' && (
                <Button
                  size="compact-sm"
                  variant="default"
                  title={selected.data.disabled ? 'Run this step again' : 'Keep this step but skip it: its input goes on to the next step'}
                  onClick={() => {
                    const d = selected.data as StepData;
                    updateData(selected.id, { ...d, disabled: !d.disabled }, 'disabled');
                  }}
                >
                  {selected.data.disabled ? 'Enable' : 'Disable'}
                </Button>
              )}
              {selected.id !== TRIGGER_ID && (
                <Tooltip label="Delete step (Delete key on the canvas)">
                  <ActionIcon variant="subtle" color="red" aria-label={`Delete step ${selected.id}`} onClick={() => deleteNode(selected.id)}>
                    <IconTrash size={18} />
                  </ActionIcon>
                </Tooltip>
              )}
            </Group>
          </Group>
          <ScrollArea style={{ flex: 1 }} type="auto">
            <Stack p="md" gap="md">
              {selected.data.kind !== 'trigger' && selected.data.disabled && (
                <Alert color="gray" variant="light" title="This step is disabled" data-testid="panel-disabled">
                  Runs skip it and pass its input on to the next step. Enable it to run it again.
                </Alert>
              )}
              {selected.data.error && (
                <Alert color="red" variant="light" role="alert" title="The server refused this step" data-testid="panel-error">
                  {selected.data.error}
                </Alert>
              )}
              <FieldsProvider value={{ setTarget, offerTarget, scope, onTarget: setTargetLabel }}>
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
                    draft={triggerDraft}
                    onDraft={(d) => {
                      setTriggerDraft(d);
                      setDirty(true);
                      setNodes((ns) => ns.map((n) => (n.id === TRIGGER_ID && n.data.error ? ({ ...n, data: { ...n.data, error: undefined } } as AnyNode) : n)));
                    }}
                    projects={projects}
                    onRunNow={() => setRunNowOpen(true)}
                    onTypeChange={changeType}
                  />
                ) : (
                  <>
                    <TextInput
                      label="Step name"
                      placeholder={KIND_LABEL[selected.data.kind]}
                      value={selected.data.name}
                      onChange={(e) => updateData(selected.id, { ...(selected.data as StepData), name: e.currentTarget.value }, 'name')}
                    />
                    <StepForm
                      key={selected.id}
                      data={selected.data}
                      projects={projects}
                      onChange={(d, moves) => {
                        updateData(selected.id, d, 'form');
                        // A removed Switch rule: its edges go, the later rules' edges follow their rows.
                        if (moves?.size) setEdges((es) => remapBranchEdges(es, selected.id, moves));
                      }}
                    />
                    <OnErrorSelect
                      value={selected.data.onError}
                      onChange={(onError) => updateData(selected.id, { ...(selected.data as StepData), onError }, 'onError')}
                    />
                    <RetrySettings
                      key={`retry-${selected.id}`}
                      value={selected.data.retry}
                      onChange={(retry) => updateData(selected.id, { ...(selected.data as StepData), retry }, 'retry')}
                    />
                    <RunStep
                      key={`run-step-${selected.id}`}
                      workflowId={workflow.id}
                      nodeId={selected.id}
                      data={selected.data}
                      sample={scope.trigger}
                      outputs={scope.nodes}
                      {...(scope.loop ? { loop: scope.loop } : {})}
                      onOutput={(output) => setTested((t) => ({ ...t, [selected.id]: output }))}
                    />
                  </>
                )}
                {selected.data.kind === 'trigger' && (
                  <>
                    <ErrorWorkflowSelect workflowId={workflow.id} value={errorWorkflowId} onChange={(id) => (setErrorWorkflowId(id), setDirty(true))} />
                    <RetentionSettings value={retention} onChange={(r) => (setRetention(r), setDirty(true))} />
                  </>
                )}
                <Divider />
                <VariablePicker
                  triggerType={workflow.triggerType}
                  trigger={trigger}
                  sample={workflow.samplePayload}
                  sampleAt={workflow.samplePayloadAt}
                  samplePinned={pinned}
                  sampleControls={
                    <SampleControls
                      workflow={workflow}
                      runs={runs}
                      onChanged={(w) => changeMeta({ samplePayload: w.samplePayload, samplePayloadAt: w.samplePayloadAt, samplePin: w.samplePin ?? null })}
                    />
                  }
                  webhook={workflow.webhook ?? null}
                  secret={secret}
                  active={workflow.active}
                  nodeSources={nodeSources}
                  credentials={credentials}
                  resumeWaits={nodes.filter((n) => n.data.kind === 'wait' && n.data.form.mode === 'resume').map((n) => n.id)}
                  targetLabel={selected.id === TRIGGER_ID ? null : targetLabel}
                  onPick={pick}
                />
              </FieldsProvider>
            </Stack>
          </ScrollArea>
        </aside>
      </div>
      <RunNowDialog
        workflow={workflow}
        opened={runNowOpen}
        unsaved={dirty}
        onClose={() => setRunNowOpen(false)}
        onStarted={(run) => {
          notifications.show({ color: 'green', message: 'Run started.' });
          // Unsaved changes: the router's guard asks before leaving, as for any link.
          navigate(`/runs/${run.id}`);
        }}
      />
    </>
  );
}

function activatedText(type: TriggerType, active: boolean): string {
  if (type === 'webhook') return active ? 'Workflow activated: its webhook now starts runs.' : 'Workflow deactivated: its webhook answers 404.';
  if (type === 'manual') return active ? 'Workflow activated.' : 'Workflow deactivated.';
  return active
    ? `Workflow activated: its ${TRIGGER_LABEL[type].toLowerCase()} trigger now starts runs.`
    : `Workflow deactivated: its ${TRIGGER_LABEL[type].toLowerCase()} trigger starts nothing.`;
}
