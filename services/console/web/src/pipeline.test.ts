import { expect, test } from 'vitest';
import { age, pipelineVerdict, traceUrl, traceUrlTemplate } from './pipeline.ts';
import type { RunsHealth } from './workspace.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();
const health = (change: Partial<RunsHealth> = {}): RunsHealth => ({
  checkedAt: at(0),
  since: at(3_600_000),
  byStatus: { queued: 0, running: 1, succeeded: 12, failed: 0, skipped: 2 },
  failingWorkflows: [],
  backlog: { waitingEvents: 1, oldestWaitingAt: at(2_000), unfinishedRuns: 1, oldestUnfinishedAt: at(1_000) },
  deadLettered: { count: 0, last: null },
  ...change,
});

test('a pipeline that keeps up and does not fail is healthy', () => {
  expect(pipelineVerdict(health(), NOW)).toEqual({ healthy: true, reasons: [] });
  // Kafka: the backlog is not counted; that alone is no reason for alarm.
  expect(pipelineVerdict(health({ backlog: { waitingEvents: null, oldestWaitingAt: null, unfinishedRuns: 0, oldestUnfinishedAt: null } }), NOW).healthy).toBe(
    true,
  );
});

test('dead letters, an old unprocessed event, a stuck run and failures each need attention, the most serious first', () => {
  const v = pipelineVerdict(
    health({
      byStatus: { queued: 0, running: 1, succeeded: 3, failed: 4, skipped: 0 },
      failingWorkflows: [
        { workflowId: 'a', runs: 5, failed: 3, lastFailure: { runId: 'r', at: at(60_000), error: 'HTTP 500' } },
        { workflowId: 'b', runs: 1, failed: 1, lastFailure: { runId: 's', at: at(60_000), error: null } },
      ],
      backlog: { waitingEvents: 40, oldestWaitingAt: at(5 * 60_000), unfinishedRuns: 2, oldestUnfinishedAt: at(3 * 3_600_000) },
      deadLettered: { count: 1, last: { runId: 'd', at: at(1000), error: 'the event could not be processed after 5 attempts: x' } },
    }),
    NOW,
  );
  expect(v.healthy).toBe(false);
  expect(v.reasons).toEqual([
    '1 event could not be processed after retries (dead-lettered)',
    'The oldest unprocessed event has waited 5 min',
    'A run has been unfinished for 3 h',
    '4 runs failed in 2 workflows',
  ]);
  expect(
    pipelineVerdict(health({ backlog: { waitingEvents: 1, oldestWaitingAt: at(59_000), unfinishedRuns: 0, oldestUnfinishedAt: null } }), NOW).healthy,
  ).toBe(true);
});

test('ages in words', () => {
  expect([age(-5), age(45_000), age(119_000), age(12 * 60_000), age(3 * 3_600_000)]).toEqual(['0 s', '45 s', '119 s', '12 min', '3 h']);
});

test('a trace link from the configured template, only for a real trace id and an http(s) result', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  expect(traceUrl('https://grafana.example/explore?traceId={traceId}', id)).toBe(`https://grafana.example/explore?traceId=${id}`);
  expect(traceUrl('http://jaeger:16686/trace/{traceId}', id)).toBe(`http://jaeger:16686/trace/${id}`);
  expect(traceUrl(null, id)).toBeNull();
  expect(traceUrl('https://t.example/{traceId}', null)).toBeNull();
  expect(traceUrl('https://t.example/{traceId}', 'not-a-trace"><script>')).toBeNull();
  expect(traceUrl('javascript:alert("{traceId}")', id)).toBeNull();
});

test('the template is read from the page’s meta element', () => {
  const doc = (content: string | null) =>
    ({ querySelector: (sel: string) => (sel === 'meta[name="flowdesk-trace-url"]' && content !== null ? { content } : null) }) as unknown as Document;
  expect(traceUrlTemplate(doc('https://t.example/{traceId}'))).toBe('https://t.example/{traceId}');
  expect(traceUrlTemplate(doc(null))).toBeNull();
  expect(traceUrlTemplate(doc(''))).toBeNull();
});
