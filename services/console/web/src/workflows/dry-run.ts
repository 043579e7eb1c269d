/**
 * The editor's dry run (docs/console.md, "Previews from a dry run"): the graph as it is in the editor
 * (saved or not) walked by the engine on the sample (POST /workflows/:id/dry-run), so that later
 * steps' previews and the variable picker have outputs before any real run. The engine executes no
 * action (HTTP Request, Send Email, Create Task, …): for those it is sent the outputs already known
 * (the last run's, Run this step's) to stand in, and answers `not_run`.
 */
import type { Edge } from '@xyflow/react';
import { useEffect, useMemo, useState } from 'react';
import { api, type DryRunResult } from '../api.ts';
import type { AnyNode } from './canvas-nodes.tsx';
import { definitionOf, toApiGraph } from './graph.ts';
import type { KnownOutput } from './picker-sources.ts';

/** After the last change, the editor waits this long before asking (typing in a field is one dry run). */
export const DRY_RUN_DEBOUNCE_MS = 800;
export const FROM_DRY_RUN = 'dry run on the sample';

/** Per node id, the output the dry run computed (a loop-body step: its first item's); actions it did not run are left out. */
export function dryRunOutputs(result: DryRunResult | null): Map<string, KnownOutput> {
  const out = new Map<string, KnownOutput>();
  if (!result) return out;
  for (const s of result.steps) {
    if (s.status !== 'succeeded' || s.output === null || s.output === undefined) continue;
    if ((s.item ?? 0) !== 0 || out.has(s.nodeId)) continue;
    out.set(s.nodeId, { output: s.output, from: FROM_DRY_RUN });
  }
  return out;
}

/**
 * The outputs the picker and previews use: Run this step's first (newest), then — with a pinned
 * sample — the dry run's, which belong to that sample, then the runs', then the dry run's for
 * nodes no run reached.
 */
export function mergeKnown(
  fromRuns: ReadonlyMap<string, KnownOutput>,
  fromDryRun: ReadonlyMap<string, KnownOutput>,
  pinned: boolean,
): Map<string, KnownOutput> {
  const out = new Map<string, KnownOutput>();
  const ids = new Set([...fromRuns.keys(), ...fromDryRun.keys()]);
  for (const id of ids) {
    const run = fromRuns.get(id);
    const dry = fromDryRun.get(id);
    const chosen = run?.from === 'Run this step' ? run : pinned ? (dry ?? run) : (run ?? dry);
    if (chosen) out.set(id, chosen);
  }
  return out;
}

/**
 * Runs the dry run DRY_RUN_DEBOUNCE_MS after the graph, the sample or the known action outputs
 * change (never twice for the same request); a refused one (429, a graph with a problem) keeps the
 * last answer.
 */
export function useDryRun(
  workflowId: string,
  nodes: AnyNode[],
  edges: Edge[],
  sample: Record<string, unknown> | null,
  known: ReadonlyMap<string, KnownOutput>,
): DryRunResult | null {
  const [result, setResult] = useState<DryRunResult | null>(null);
  const request = useMemo(() => {
    if (!sample) return null;
    const { graph, problems } = toApiGraph(nodes, edges);
    if (Object.keys(problems).length > 0 || graph.nodes.length === 0) return null;
    // Positions and names change no output: leave them out, so moving a card asks nothing.
    const bare = { ...graph, nodes: graph.nodes.map(({ position: _p, name: _n, ...n }) => n), triggerPosition: undefined };
    const actions = new Set(graph.nodes.filter((n) => definitionOf(n.type).action).map((n) => n.id));
    const assumed = Object.fromEntries([...known].filter(([id]) => actions.has(id)).map(([id, k]) => [id, k.output]));
    return JSON.stringify({ graph: bare, payload: sample, assumed });
  }, [nodes, edges, sample, known]);
  useEffect(() => {
    if (!request) return;
    let stale = false;
    const timer = setTimeout(() => {
      api.dryRun(workflowId, JSON.parse(request) as Parameters<typeof api.dryRun>[1]).then(
        (r) => {
          if (!stale) setResult(r);
        },
        () => {
          // Refused (too many, a problem the editor marks on save): the previews keep the last answer.
        },
      );
    }, DRY_RUN_DEBOUNCE_MS);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [workflowId, request]);
  return result;
}
