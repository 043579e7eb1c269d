// Per-node "on error" (issue 24 item 5): fail the run (default), continue with the error as the
// node's output, or follow the node's error branch. A real HTTP server answers 500 on /fail.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TriggerEvent, WorkflowGraph, WorkflowNode } from '@flowdesk/contracts';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow } from '../src/domain/executor.ts';
import type { CreateTaskInput } from '../src/domain/ports.ts';
import { fixedClock, json, silentLog, startServer, type TestServer } from './support.ts';

let server: TestServer;
let http: GuardedHttpClient;
before(async () => {
  server = await startServer((req, res) => (req.url === '/fail' ? json(res, 500, { error: 'boom' }) : json(res, 200, { ok: true })));
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
});
after(async () => {
  await http.close();
  await server.close();
});

const event: TriggerEvent = {
  eventId: 'evt-1',
  workflowId: '00000000-0000-4000-8000-000000000001',
  ownerId: '00000000-0000-4000-8000-0000000000aa',
  source: 'webhook',
  receivedAt: '2025-03-01T10:00:00.000Z',
  payload: {},
  headers: {},
};

/** trigger → call (POST /fail) → ok (task "after {{nodes.call.error}}"), and call -error-> fallback (task). */
function graph(onError: WorkflowNode['onError'], withErrorEdge = false): WorkflowGraph {
  return {
    nodes: [
      { id: 'call', type: 'http_request', ...(onError ? { onError } : {}), params: { method: 'POST', url: `${server.url}/fail` } },
      { id: 'ok', type: 'create_task', params: { title: 'after: {{nodes.call.error}}' } },
      { id: 'fallback', type: 'create_task', params: { title: 'fallback: {{nodes.call.error}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'call' },
      { from: 'call', to: 'ok' },
      // Without the error edge, the fallback is unreachable (never runs, never recorded).
      ...(withErrorEdge ? [{ from: 'call', to: 'fallback', branch: 'error' as const }] : []),
    ],
  };
}

async function run(g: WorkflowGraph) {
  const titles: string[] = [];
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph: g },
    event,
    ports: {
      http,
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
      createTask: async (_owner: string, input: CreateTaskInput) => {
        titles.push(input.title);
        return { id: `task-${titles.length}`, ...input };
      },
    },
  });
  return { record, titles };
}

test('on error "fail" (the default): the run fails at the node and nothing after it runs', async () => {
  for (const g of [graph(undefined, false), graph('fail', false)]) {
    const { record, titles } = await run(g);
    assert.equal(record.status, 'failed');
    assert.match(record.error!, /^node "call" failed: .*HTTP 500/);
    assert.deepEqual(titles, []);
    assert.deepEqual(
      record.steps.map((s) => [s.nodeId, s.status]),
      [['call', 'failed']],
    );
  }
});

test('on error "continue": the run goes on along the usual edges with { error } as the node output, and succeeds', async () => {
  const { record, titles } = await run(graph('continue'));
  assert.equal(record.status, 'succeeded');
  assert.equal(record.error, null);
  assert.equal(titles.length, 1);
  assert.match(titles[0]!, /^after: POST http:\/\/127\.0\.0\.1:\d+\/fail answered HTTP 500$/);
  const call = record.steps.find((s) => s.nodeId === 'call')!;
  assert.equal(call.status, 'failed', 'the step still shows it failed');
  assert.match(call.error!, /HTTP 500/);
  assert.deepEqual((call.output as { output: { body: unknown } }).output.body, { error: 'boom' }, 'the failing answer is kept under output');
});

test('on error "branch": only the error edges are followed; the usual ones are skipped', async () => {
  const { record, titles } = await run(graph('branch', true));
  assert.equal(record.status, 'succeeded');
  assert.equal(titles.length, 1);
  assert.match(titles[0]!, /^fallback: POST .*answered HTTP 500$/);
  assert.deepEqual(Object.fromEntries(record.steps.map((s) => [s.nodeId, s.status])), { call: 'failed', ok: 'skipped', fallback: 'succeeded' });
});

test('on error "branch": a node that succeeds takes its usual edges, never the error edges', async () => {
  const g = graph('branch', true);
  (g.nodes[0]!.params as { url: string }).url = `${server.url}/ok`;
  const { record, titles } = await run(g);
  assert.equal(record.status, 'succeeded');
  assert.deepEqual(titles, ['after:'], 'no error: the variable renders empty (the title is trimmed)');
  assert.deepEqual(Object.fromEntries(record.steps.map((s) => [s.nodeId, s.status])), { call: 'succeeded', ok: 'succeeded', fallback: 'skipped' });
});

test('a node on its error branch that fails itself (fail) fails the run', async () => {
  const g = graph('branch', true);
  g.nodes[2] = { id: 'fallback', type: 'http_request', params: { method: 'POST', url: `${server.url}/fail` } };
  const { record } = await run(g);
  assert.equal(record.status, 'failed');
  assert.match(record.error!, /^node "fallback" failed/);
});
