/**
 * The workflow editor's behaviour, one hook each (pages/WorkflowEditor.tsx composes them): undo/redo
 * history of the canvas, the unsaved-changes guard, polling for a new sample payload and the last
 * run, the keyboard shortcuts, and saving (with the server's errors put on their nodes).
 */
import type { Edge } from '@xyflow/react';
import { notifications } from '@mantine/notifications';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type Dispatch, type MutableRefObject, type SetStateAction } from 'react';
import { api, ApiError, type Workflow, type WorkflowRun } from '../api.ts';
import { setNavigationBlocker } from '../router.tsx';
import type { AnyNode } from './canvas-nodes.tsx';
import { nodeOfError, toApiGraph, TRIGGER_ID } from './graph.ts';
import type { TriggerDraft } from './TriggerPanel.tsx';

/** How often the open editor asks for a new sample payload and the last run (only while the tab is visible). */
const POLL_MS = 2_000;
const HISTORY_LIMIT = 100;

interface Snapshot {
  nodes: AnyNode[];
  edges: Edge[];
}

type SetState<T> = Dispatch<SetStateAction<T>>;

/**
 * Undo/redo: a snapshot of the canvas before each change (`remember`, called before it; typing in
 * one field within a second is one step), at most HISTORY_LIMIT back.
 */
export function useHistory(nodes: AnyNode[], edges: Edge[], setNodes: SetState<AnyNode[]>, setEdges: SetState<Edge[]>, setDirty: SetState<boolean>) {
  const past = useRef<Snapshot[]>([]);
  const future = useRef<Snapshot[]>([]);
  /** How many steps Undo and Redo have (the stacks are refs: they change with no render of their own). */
  const [historySize, setHistorySize] = useState({ past: 0, future: 0 });
  const lastEdit = useRef<{ key: string; at: number } | null>(null);
  const current = useRef<Snapshot>({ nodes, edges });
  useLayoutEffect(() => {
    current.current = { nodes, edges };
  }, [nodes, edges]);
  /** Records the canvas before a change; typing in one field within a second is one step. */
  const remember = useCallback(
    (key?: string) => {
      const now = Date.now();
      if (key && lastEdit.current?.key === key && now - lastEdit.current.at < 1000) {
        lastEdit.current.at = now;
      } else {
        past.current = [...past.current.slice(-HISTORY_LIMIT + 1), current.current];
        future.current = [];
        lastEdit.current = key ? { key, at: now } : null;
        setHistorySize({ past: past.current.length, future: future.current.length });
      }
      setDirty(true);
    },
    [setDirty],
  );
  const restore = useCallback(
    (from: MutableRefObject<Snapshot[]>, to: MutableRefObject<Snapshot[]>) => {
      const snap = from.current.at(-1);
      if (!snap) return;
      from.current = from.current.slice(0, -1);
      to.current = [...to.current, current.current];
      lastEdit.current = null;
      setNodes(snap.nodes);
      setEdges(snap.edges);
      setDirty(true);
      setHistorySize({ past: past.current.length, future: future.current.length });
    },
    [setNodes, setEdges, setDirty],
  );
  const undo = useCallback(() => restore(past, future), [restore]);
  const redo = useCallback(() => restore(future, past), [restore]);
  return { remember, undo, redo, historySize };
}

/** Leaving with unsaved changes (a link, back/forward, closing the tab) asks first. */
export function useLeaveGuard(dirty: boolean) {
  const dirtyRef = useRef(dirty);
  useLayoutEffect(() => {
    dirtyRef.current = dirty;
  }, [dirty]);
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
}

/** How many recent runs the editor reads: the picker takes each earlier node's output from the newest of them that executed it. */
export const RECENT_RUNS = 10;

/**
 * Live: a new sample payload and the recent runs (newest first), polled while the tab is visible (no SSE endpoint
 * exists). `metaVersion` is bumped on every local change of the trigger settings: a poll that
 * started before it does not overwrite them.
 */
export function useWorkflowPolling(id: string, metaVersion: MutableRefObject<number>, setWorkflow: SetState<Workflow>, setRuns: SetState<WorkflowRun[]>) {
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      if (document.visibilityState !== 'visible') return;
      const version = metaVersion.current;
      try {
        const [fresh, runs] = await Promise.all([api.getWorkflow(id), api.listRuns(id, RECENT_RUNS).catch(() => null)]);
        if (stop) return;
        // A local change since this poll started (trigger settings, a pinned sample) is not overwritten by it.
        const meta =
          version === metaVersion.current
            ? {
                active: fresh.active,
                webhook: fresh.webhook,
                triggerConfig: fresh.triggerConfig,
                samplePayload: fresh.samplePayload,
                samplePayloadAt: fresh.samplePayloadAt,
                samplePin: fresh.samplePin ?? null,
              }
            : {};
        setWorkflow((w) => ({ ...w, ...meta }));
        if (runs) setRuns(runs);
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
  }, [id, metaVersion, setWorkflow, setRuns]);
}

/** Ctrl/Cmd+S saves, +Z undoes, +Shift+Z or +Y redoes — outside text fields (fields keep their own undo). */
export function useEditorShortcuts(keys: { save: () => unknown; undo: () => void; redo: () => void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
      if (!(e.ctrlKey || e.metaKey)) return;
      const k = e.key.toLowerCase();
      if (k === 's') {
        e.preventDefault();
        void keys.save();
      } else if (k === 'z' && !e.shiftKey) {
        e.preventDefault();
        keys.undo();
      } else if ((k === 'z' && e.shiftKey) || k === 'y') {
        e.preventDefault();
        keys.redo();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });
}

/**
 * Save: the canvas, name, execution order and trigger settings in one PATCH. Problems found before
 * sending (and the server's 400s) are put on their node, which is selected; `save` answers whether
 * the workflow was saved.
 */
export function useSave(editor: {
  workflow: Workflow;
  nodes: AnyNode[];
  edges: Edge[];
  name: string;
  executionOrder: Workflow['executionOrder'];
  /** Started when a run of this workflow fails (another workflow of the owner), or null. */
  errorWorkflowId: string | null;
  /** The workflow's own run history retention, or null (the global setting). */
  retention: Workflow['retention'];
  triggerDraft: TriggerDraft | null;
  setNodes: SetState<AnyNode[]>;
  select: (nodeId: string) => void;
  onSaved: (saved: Workflow) => void;
}) {
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const { workflow, nodes, edges, name, executionOrder, errorWorkflowId, retention, triggerDraft, setNodes, select, onSaved } = editor;
  const markErrors = (errors: Record<string, string>) => setNodes((ns) => ns.map((n) => ({ ...n, data: { ...n.data, error: errors[n.id] } }) as AnyNode));

  const save = async (): Promise<boolean> => {
    const { graph, problems } = toApiGraph(nodes, edges);
    setSaveError(null);
    if (triggerDraft?.problem) problems[TRIGGER_ID] = triggerDraft.problem;
    if (Object.keys(problems).length) {
      markErrors(problems);
      select(Object.keys(problems)[0]!);
      setSaveError('Fix the marked steps, then save again.');
      return false;
    }
    setSaving(true);
    try {
      const saved = await api.updateWorkflow(workflow.id, {
        name: name.trim() || workflow.name,
        graph,
        executionOrder,
        errorWorkflowId,
        retention: retention ?? null,
        ...(triggerDraft ? { triggerConfig: triggerDraft.config } : {}),
      });
      onSaved(saved);
      markErrors({});
      notifications.show({ color: 'green', message: 'Workflow saved.' });
      return true;
    } catch (err) {
      const message = (err as Error).message;
      // The trigger's settings (body.triggerConfig.cron: …) are the trigger node's.
      const nodeId = err instanceof ApiError && err.status === 400 ? (/triggerConfig/.test(message) ? TRIGGER_ID : nodeOfError(message, graph)) : null;
      if (nodeId) {
        markErrors({ [nodeId]: message.replace(/^body\.graph(\.nodes\.\d+)?\s*/, '').replace(/^body\./, '') });
        select(nodeId);
        setSaveError(`Not saved: a step has a problem (${nodeId}).`);
      } else setSaveError(`Not saved: ${message}`);
      return false;
    } finally {
      setSaving(false);
    }
  };
  return { save, saving, saveError };
}
