/**
 * What the variable picker offers for the step being edited (docs/console.md, "Variable picker"): the
 * outputs of the nodes before it in the graph (its ancestors, never later nodes), each from the most
 * recent run that executed that node (or from Run this step), and inside a For each's loop body the
 * current `item` (the first element of the loop's list in the sample / last run) and `index`.
 */
import type { RunStep, WorkflowRun } from '@flowdesk/contracts';
import { enclosingLoop, KIND_LABEL, toParams, TRIGGER_ID, upstreamOf, type NodeData } from './graph.ts';
import { loopItemSample, type PreviewScope } from './templates.ts';

/** A node's output as the picker knows it, and where it comes from. */
export interface KnownOutput {
  output: unknown;
  /** `last run` (the newest run that executed it) or `Run this step`. */
  from: string;
}

export interface PickerSource {
  /** Variables under this root, e.g. `trigger` or `nodes.http_1`; empty: the value's own paths (`item.sku`, `index`). */
  root: string;
  title: string;
  value: unknown;
  note?: string;
  /** Shown instead of fields when the node's output is not known yet. */
  empty?: string;
}

export const NOT_RUN_YET = 'Run the workflow or use Run this step to see this node’s fields.';

const executed = (s: RunStep) => s.status !== 'skipped' && s.output !== null && s.output !== undefined;

/**
 * Per node id, its output in the newest of `runs` (newest first) that executed it; a loop-body step
 * gives its first item's output. Outputs from Run this step (`tested`) come first: they are newer.
 */
export function knownOutputs(runs: readonly WorkflowRun[], tested: Readonly<Record<string, unknown>> = {}): Map<string, KnownOutput> {
  const out = new Map<string, KnownOutput>();
  for (const [id, output] of Object.entries(tested)) if (output !== null && output !== undefined) out.set(id, { output, from: 'Run this step' });
  for (const run of runs) {
    const inRun = new Map<string, RunStep>();
    for (const s of run.steps) {
      if (!executed(s)) continue;
      const seen = inRun.get(s.nodeId);
      if (!seen || (s.item ?? 0) < (seen.item ?? 0)) inRun.set(s.nodeId, s);
    }
    for (const [id, s] of inRun) if (!out.has(id)) out.set(id, { output: s.output, from: 'last run' });
  }
  return out;
}

/** The `{{nodes.<id>.…}}` scope of previews and Run this step: every known output by node id. */
export const outputsScope = (known: ReadonlyMap<string, KnownOutput>): Record<string, unknown> =>
  Object.fromEntries([...known].map(([id, k]) => [id, k.output]));

interface PickerNode {
  id: string;
  data: NodeData;
}
interface PickerEdge {
  source: string;
  target: string;
  sourceHandle?: string | null;
}

/**
 * The picker's sources for the selected node: the loop's `item` and `index` inside a For each body,
 * then each earlier node (graph ancestors, in the canvas' order; the enclosing For each itself is left
 * out: inside its body `item` stands for it) with its known output, or a hint to run it.
 */
export function pickerSources(
  selectedId: string,
  nodes: readonly PickerNode[],
  edges: readonly PickerEdge[],
  scope: PreviewScope,
  known: ReadonlyMap<string, KnownOutput>,
): PickerSource[] {
  if (selectedId === TRIGGER_ID) return [];
  const loopId = enclosingLoop(selectedId, nodes as PickerNode[], edges as PickerEdge[]);
  const before = new Set(upstreamOf(selectedId, edges as PickerEdge[]));
  const sources: PickerSource[] = [];
  const loop = loopId ? nodes.find((n) => n.id === loopId) : undefined;
  if (loop && loop.data.kind !== 'trigger') {
    const raw = toParams(loop.data).params.items;
    const item = loopItemSample(typeof raw === 'string' ? raw : '', scope);
    sources.push({
      root: '',
      title: `For each ${loop.data.name || loop.id}: the current item`,
      value: { item: item ?? {}, index: 0 },
      note: item === null ? 'no sample item' : 'first item of the list',
    });
  }
  for (const n of nodes) {
    if (n.data.kind === 'trigger' || !before.has(n.id) || n.id === loopId) continue;
    const title = `${n.data.name || KIND_LABEL[n.data.kind]} (${n.id})`;
    const k = known.get(n.id);
    sources.push(
      k
        ? { root: `nodes.${n.id}`, title, value: k.output, note: k.from }
        : { root: `nodes.${n.id}`, title, value: null, note: 'not run yet', empty: NOT_RUN_YET },
    );
  }
  return sources;
}

/** The preview scope of a step inside a loop body: `item` as the picker shows it and `index` 0. */
export function stepScope(selectedId: string, nodes: readonly PickerNode[], edges: readonly PickerEdge[], scope: PreviewScope): PreviewScope {
  const loopId = enclosingLoop(selectedId, nodes as PickerNode[], edges as PickerEdge[]);
  const loop = loopId ? nodes.find((n) => n.id === loopId) : undefined;
  if (!loop || loop.data.kind === 'trigger') return scope;
  const raw = toParams(loop.data).params.items;
  const item = loopItemSample(typeof raw === 'string' ? raw : '', scope);
  return item === null ? scope : { ...scope, loop: { item, index: 0 } };
}
