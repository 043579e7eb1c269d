/**
 * The run pipeline's health in words (the Overview's "Run pipeline" card) and a run's trace link (the
 * run page): pure functions of the API's answers, unit-tested (pipeline.test.ts).
 */
import type { RunsHealth } from './workspace.ts';

/** An event accepted this long ago and still not processed: the engine is behind or stopped. */
export const WAITING_TOO_LONG_MS = 60_000;
/** A run queued or running this long: stuck (a node's own time limits are far shorter). */
export const UNFINISHED_TOO_LONG_MS = 10 * 60_000;

export interface Verdict {
  healthy: boolean;
  /** What needs attention, most serious first; empty when healthy. */
  reasons: string[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** "45 s", "12 min", "3 h" */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** Whether the pipeline needs someone, and why. `now` is the browser's clock (the answer's checkedAt is the server's). */
export function pipelineVerdict(h: RunsHealth, now = Date.parse(h.checkedAt)): Verdict {
  const reasons: string[] = [];
  if (h.deadLettered.count > 0) reasons.push(`${plural(h.deadLettered.count, 'event')} could not be processed after retries (dead-lettered)`);
  const waitingFor = h.backlog.oldestWaitingAt ? now - Date.parse(h.backlog.oldestWaitingAt) : 0;
  if (waitingFor >= WAITING_TOO_LONG_MS) reasons.push(`The oldest unprocessed event has waited ${age(waitingFor)}`);
  const unfinishedFor = h.backlog.oldestUnfinishedAt ? now - Date.parse(h.backlog.oldestUnfinishedAt) : 0;
  if (unfinishedFor >= UNFINISHED_TOO_LONG_MS) reasons.push(`A run has been unfinished for ${age(unfinishedFor)}`);
  if (h.byStatus.failed > 0) reasons.push(`${plural(h.byStatus.failed, 'run')} failed in ${plural(h.failingWorkflows.length, 'workflow')}`);
  return { healthy: reasons.length === 0, reasons };
}

/** The page's trace URL template (TRACE_URL_TEMPLATE, a meta element the console adds), or null. */
export function traceUrlTemplate(doc: Pick<Document, 'querySelector'> | undefined = typeof document === 'undefined' ? undefined : document): string | null {
  return doc?.querySelector<HTMLMetaElement>('meta[name="flowdesk-trace-url"]')?.content || null;
}

/** The link to a trace: the template with {traceId} replaced; null without a template or an id that is not a trace id. */
export function traceUrl(template: string | null, traceId: string | null | undefined): string | null {
  if (!template || !traceId || !/^[0-9a-f]{32}$/.test(traceId)) return null;
  const url = template.replaceAll('{traceId}', traceId);
  return /^https?:\/\//i.test(url) ? url : null;
}
