/**
 * The per-node retry policy (docs/workflow-engine.md, "Retries"): backoff timing through the injected
 * sleeper, Retry-After from a real server on loopback, POST retried only with its Idempotency-Key,
 * which failures are retried, attempts recorded on the step, onError after the last attempt, a cancel
 * interrupting a sleeping retry, and a resumed step counting on from its checkpoint.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RetryPolicy, WorkflowGraph, WorkflowNode } from '@flowdesk/contracts';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import { executeWorkflow, LOOP_RETRY_MAX_SLEEP_MS, type ExecuteWorkflowInput, type StepCheckpoint } from '../src/domain/executor.ts';
import type { CreateTaskInput } from '../src/domain/ports.ts';
import { abortableSleep, backoffDelay, failureKind, resolveRetry, retryAfterMs } from '../src/domain/retry.ts';
import { HttpStatusError, NetworkError, RequestTimeoutError } from '../src/domain/errors.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { fixedEvent, json, silentLog, startServer, type TestServer } from './support.ts';

const NOW = Date.parse('2025-03-01T10:00:00.000Z');
let server: TestServer;
let http: GuardedHttpClient;

before(async () => {
  server = await startServer((req, res) => {
    // Each path counts its own requests: /fail-N answers 503 N times then 200.
    const seen = server.received.filter((r) => r.url === req.url).length;
    const failN = /^\/(?:fail|keyed|unkeyed)-(\d+)/.exec(req.url);
    if (failN) return seen <= Number(failN[1]) ? json(res, 503, { error: 'busy', seen }) : json(res, 200, { ok: true, seen });
    if (req.url.startsWith('/rate-seconds')) return seen === 1 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '3' }) : json(res, 200, { ok: true });
    if (req.url.startsWith('/rate-date'))
      return seen === 1 ? json(res, 429, {}, { 'retry-after': new Date(NOW + 4_000).toUTCString() }) : json(res, 200, { ok: true });
    if (req.url.startsWith('/rate-long')) return seen === 1 ? json(res, 429, {}, { 'retry-after': '3600' }) : json(res, 200, { ok: true });
    if (req.url.startsWith('/always-503')) return json(res, 503, { error: 'down' });
    if (req.url.startsWith('/bad-request')) return json(res, 400, { error: 'bad' });
    json(res, 200, { ok: true });
  });
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
});
after(async () => {
  await http.close();
  await server.close();
});

function requestsTo(path: string) {
  return server.received.filter((r) => r.url === path);
}

let eventSeq = 0;
async function run(nodes: WorkflowNode[], extra: Partial<ExecuteWorkflowInput> & { random?: () => number; edges?: WorkflowGraph['edges'] } = {}) {
  const sleeps: number[] = [];
  const tasks: CreateTaskInput[] = [];
  const keys: (string | undefined)[] = [];
  const graph: WorkflowGraph = {
    nodes,
    edges: extra.edges ?? [{ from: 'trigger', to: nodes[0]!.id }, ...nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id }))],
  };
  const ev = fixedEvent(`evt-retry-${++eventSeq}`, {});
  const { random, edges: _edges, ...rest } = extra;
  const record = await executeWorkflow({
    workflow: { id: ev.workflowId, ownerId: ev.ownerId, graph },
    event: ev,
    ports: {
      http,
      clock: () => new Date(NOW),
      log: silentLog,
      sandbox: inProcessSandbox,
      sleep: async (ms) => void sleeps.push(ms),
      random: random ?? (() => 0.5),
      createTask: async (_owner, input, opts) => {
        tasks.push(input);
        keys.push(opts.idempotencyKey);
        if (tasks.length < 3) throw Object.assign(new Error('workspace-api answered 503'), { status: 503 });
        return { id: 'task-1', ...input };
      },
    },
    ...rest,
  });
  return { record, sleeps, tasks, keys };
}

const httpNode = (id: string, method: 'GET' | 'POST', url: string, retry?: RetryPolicy, more: Partial<WorkflowNode> = {}): WorkflowNode =>
  ({
    id,
    type: 'http_request',
    params: { method, url: `${server.url}${url}`, ...(method === 'POST' ? { body: { a: 1 } } : {}) },
    ...(retry ? { retry } : {}),
    ...more,
  }) as WorkflowNode;

test('backoff: fixed, exponential without jitter, full jitter within [0, ceiling], capped at maxDelayMs', () => {
  const fixed = resolveRetry({ attempts: 5, backoff: 'fixed', delayMs: 700 });
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => backoffDelay(fixed, n, Math.random)),
    [700, 700, 700, 700],
  );
  const exp = resolveRetry({ attempts: 6, backoff: 'exponential', delayMs: 100, maxDelayMs: 1000, jitter: false });
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => backoffDelay(exp, n, Math.random)),
    [100, 200, 400, 800, 1000],
  );
  const jittered = resolveRetry({ attempts: 6, delayMs: 100, maxDelayMs: 1000 });
  assert.equal(
    backoffDelay(jittered, 3, () => 0),
    0,
    'full jitter may wait nothing',
  );
  assert.equal(
    backoffDelay(jittered, 3, () => 0.999999),
    399,
    'and stays below the ceiling',
  );
  for (let i = 0; i < 200; i++) {
    const d = backoffDelay(jittered, 5, Math.random);
    assert.ok(d >= 0 && d < 1000, `${d} within [0, 1000)`);
  }
  assert.equal(backoffDelay(resolveRetry({ attempts: 2, backoff: 'fixed', delayMs: 5000, maxDelayMs: 1000 }), 1, Math.random), 1000, 'fixed is capped too');
  assert.deepEqual(resolveRetry(undefined).attempts, 1, 'no policy: one attempt');
});

test('Retry-After accepts delta-seconds and HTTP dates; failures are classified by what they are', () => {
  assert.equal(retryAfterMs('3', NOW), 3000);
  assert.equal(retryAfterMs(new Date(NOW + 5000).toUTCString(), NOW), 5000);
  assert.equal(retryAfterMs(new Date(NOW - 5000).toUTCString(), NOW), 0);
  assert.equal(retryAfterMs('soon', NOW), null);
  assert.equal(failureKind(new NetworkError('reset')), 'network');
  assert.equal(failureKind(new Error('wrapped', { cause: new RequestTimeoutError('slow') })), 'timeout');
  assert.equal(failureKind(new HttpStatusError('x', 502)), '5xx');
  assert.equal(failureKind(new HttpStatusError('x', 429)), '429');
  assert.equal(failureKind(new HttpStatusError('x', 404)), 'other');
  assert.equal(failureKind(new Error('boom')), 'other');
});

test('exponential backoff with jitter between attempts, through the injected sleeper; attempts and earlier errors recorded', async () => {
  const { record, sleeps } = await run([httpNode('h', 'GET', '/fail-3', { attempts: 5, delayMs: 100, maxDelayMs: 300 })]);
  assert.equal(record.status, 'succeeded');
  assert.deepEqual(sleeps, [50, 100, 150], 'random()=0.5 of the ceilings 100, 200, 300 (capped)');
  assert.equal(requestsTo('/fail-3').length, 4);
  const step = record.steps[0]!;
  assert.equal(step.attempts, 4);
  assert.equal(step.attemptErrors!.length, 3);
  assert.match(step.attemptErrors![0]!, /answered HTTP 503$/);
  assert.equal(step.error, null);
});

test('a step without a policy (or attempts: 1) makes one attempt and records no attempts', async () => {
  const { record, sleeps } = await run([httpNode('h', 'GET', '/fail-1')]);
  assert.equal(record.status, 'failed');
  assert.equal(requestsTo('/fail-1').length, 1);
  assert.deepEqual(sleeps, []);
  assert.equal(record.steps[0]!.attempts, undefined);
  assert.match(record.error!, /^node "h" failed: GET .* answered HTTP 503$/);
});

test('429 honours Retry-After from a real server (seconds and HTTP date), capped at maxDelayMs', async () => {
  const seconds = await run([httpNode('h', 'GET', '/rate-seconds', { attempts: 2, on: ['429'] })]);
  assert.equal(seconds.record.status, 'succeeded');
  assert.deepEqual(seconds.sleeps, [3000]);
  assert.equal(requestsTo('/rate-seconds').length, 2);
  const date = await run([httpNode('h', 'GET', '/rate-date', { attempts: 2, on: ['429'] })]);
  assert.deepEqual(date.sleeps, [4000]);
  const long = await run([httpNode('h', 'GET', '/rate-long', { attempts: 2, on: ['429'], maxDelayMs: 20_000 })]);
  assert.deepEqual(long.sleeps, [20_000], 'an hour is shortened to maxDelayMs');
  assert.equal(long.record.status, 'succeeded');
});

test('a POST is retried with the same Idempotency-Key on every attempt; without the key it is sent once', async () => {
  const keyed = await run([httpNode('h', 'POST', '/keyed-2', { attempts: 3, backoff: 'fixed', delayMs: 10 })]);
  assert.equal(keyed.record.status, 'succeeded');
  const keys = requestsTo('/keyed-2').map((r) => r.headers['idempotency-key']);
  assert.equal(keys.length, 3);
  assert.match(String(keys[0]), /^fd1-/);
  assert.deepEqual(new Set(keys).size, 1, 'one key for every attempt');
  assert.deepEqual(keyed.sleeps, [10, 10]);
  assert.equal(keyed.record.steps[0]!.attempts, 3);

  const unkeyed = await run(
    [httpNode('h', 'POST', '/unkeyed-2', { attempts: 3, on: ['any'] }, {}), httpNode('after', 'GET', '/ok')].map((n, i) =>
      i === 0 ? ({ ...n, params: { ...n.params, idempotencyKey: 'omit' } } as WorkflowNode) : n,
    ),
  );
  assert.equal(unkeyed.record.status, 'failed');
  assert.equal(requestsTo('/unkeyed-2').length, 1, 'a POST without its key is never repeated');
  assert.equal(requestsTo('/unkeyed-2')[0]!.headers['idempotency-key'], undefined);
  assert.deepEqual(unkeyed.sleeps, []);
});

test("which failures: a 4xx is not retried by default, only with 'any'; a 5xx not when `on` leaves it out", async () => {
  const plain = await run([httpNode('h', 'GET', '/bad-request?a', { attempts: 3 })]);
  assert.equal(requestsTo('/bad-request?a').length, 1);
  assert.equal(plain.record.steps[0]!.attempts, undefined);
  const any = await run([httpNode('h', 'GET', '/bad-request?b', { attempts: 3, on: ['any'] })]);
  assert.equal(requestsTo('/bad-request?b').length, 3);
  assert.equal(any.record.steps[0]!.attempts, 3);
  assert.match(any.record.error!, /^node "h" failed after 3 attempts: GET .* answered HTTP 400$/);
  await run([httpNode('h', 'GET', '/always-503?c', { attempts: 3, on: ['network', 'timeout'] })]);
  assert.equal(requestsTo('/always-503?c').length, 1, '5xx left out of `on`');
});

test('network errors are retried for GET (refused connections)', async () => {
  const dead = await startServer(() => {});
  const url = `${dead.url}/x`;
  await dead.close();
  const { record, sleeps } = await run([
    { id: 'h', type: 'http_request', params: { method: 'GET', url }, retry: { attempts: 3, on: ['network'], backoff: 'fixed', delayMs: 5 } },
  ]);
  assert.equal(record.status, 'failed');
  assert.equal(record.steps[0]!.attempts, 3);
  assert.deepEqual(sleeps, [5, 5]);
  assert.match(record.steps[0]!.error!, /ECONNREFUSED/);
});

test('Create Task retries with its key (exactly once in workspace-api); onError takes over after the last attempt', async () => {
  const task = await run([{ id: 't', type: 'create_task', params: { title: 'Call back' }, retry: { attempts: 3, backoff: 'fixed', delayMs: 1 } }]);
  assert.equal(task.record.status, 'succeeded');
  assert.equal(task.tasks.length, 3);
  assert.equal(new Set(task.keys).size, 1, 'the same key on every attempt');
  assert.equal(task.record.steps[0]!.attempts, 3);

  const handled = await run([
    httpNode('h', 'GET', '/always-503?d', { attempts: 2, backoff: 'fixed', delayMs: 1 }, { onError: 'continue' }),
    httpNode('after', 'GET', '/ok?after'),
  ]);
  assert.equal(handled.record.status, 'succeeded', 'continue: the run goes on after the retries are exhausted');
  assert.equal(requestsTo('/always-503?d').length, 2);
  const step = handled.record.steps[0]!;
  assert.equal(step.status, 'failed');
  assert.equal(step.attempts, 2);
  assert.equal(requestsTo('/ok?after').length, 1);
});

test('a cancel interrupts a sleeping retry: the run ends cancelled without waiting the delay', async () => {
  const controller = new AbortController();
  const sleeping: number[] = [];
  const started = Date.now();
  const pending = executeWorkflow({
    workflow: {
      id: fixedEvent('x', {}).workflowId,
      ownerId: fixedEvent('x', {}).ownerId,
      graph: {
        nodes: [
          httpNode('h', 'GET', '/always-503?e', { attempts: 5, backoff: 'fixed', delayMs: 60_000, maxDelayMs: 60_000 }),
          httpNode('after', 'GET', '/ok?e'),
        ],
        edges: [
          { from: 'trigger', to: 'h' },
          { from: 'h', to: 'after' },
        ],
      },
    },
    event: fixedEvent('evt-cancel', {}),
    ports: {
      http,
      clock: () => new Date(),
      log: silentLog,
      sandbox: inProcessSandbox,
      createTask: async () => ({}),
      sleep: (ms, signal) => {
        sleeping.push(ms);
        return abortableSleep(ms, signal);
      },
    },
    control: { cancelled: () => controller.signal.aborted, cancelSignal: () => controller.signal },
  });
  while (sleeping.length === 0) await new Promise((r) => setImmediate(r));
  assert.deepEqual(sleeping, [60_000], 'the retry sleeps (the real timer)');
  controller.abort(new Error('cancelled'));
  const record = await pending;
  assert.equal(record.status, 'cancelled');
  assert.equal(record.error, null);
  assert.ok(Date.now() - started < 30_000, 'did not sleep the 60 s delay');
  assert.equal(requestsTo('/always-503?e').length, 1);
  assert.equal(record.steps[0]!.status, 'failed');
  assert.equal(requestsTo('/ok?e').length, 0);
});

test('a resumed step counts on from its checkpoint instead of restarting at attempt 1', async () => {
  const saved: StepCheckpoint = {
    step: {
      nodeId: 'h',
      type: 'http_request',
      status: 'failed',
      input: null,
      output: null,
      error: 'GET … answered HTTP 503',
      startedAt: new Date(NOW).toISOString(),
      durationMs: 1,
      attempts: 2,
      attemptErrors: ['first'],
    },
    output: null,
  };
  const { record } = await run([httpNode('h', 'GET', '/fail-1?resume', { attempts: 5, backoff: 'fixed', delayMs: 1 })], {
    resume: { checkpoints: new Map([['h', saved]]) },
  });
  assert.equal(record.status, 'succeeded');
  const step = record.steps[0]!;
  assert.equal(step.attempts, 4, 'two attempts before the resume, two after');
  assert.deepEqual(step.attemptErrors!.slice(0, 2), ['first', 'GET … answered HTTP 503']);
});

test('a delay of at least retryParkMs parks the run (no sleep); woken, the step tries again with the same key and counts on', async () => {
  const event = fixedEvent('evt-retry-park', {});
  const nodes = [
    httpNode('h', 'POST', '/keyed-2?park', { attempts: 4, backoff: 'fixed', delayMs: 6_000, maxDelayMs: 6_000 }),
    httpNode('after', 'GET', '/ok?park'),
  ];
  const first = await run(nodes, { event, options: { retryParkMs: 5_000 } });
  assert.equal(first.record.status, 'waiting');
  assert.deepEqual(first.sleeps, [], 'no timer in memory');
  assert.equal(first.record.parked!.nodeId, 'h');
  assert.equal(first.record.parked!.resumable, false);
  assert.equal(first.record.parked!.until!.toISOString(), new Date(NOW + 6_000).toISOString());
  const parkedStep = first.record.steps[0]!;
  assert.equal(parkedStep.status, 'waiting');
  assert.equal(parkedStep.attempts, 1);
  assert.equal(parkedStep.retryAt, new Date(NOW + 6_000).toISOString());
  assert.match(parkedStep.error!, /503/);
  assert.equal(requestsTo('/ok?park').length, 0);

  // The wake: the stored checkpoints, the parked step again (the timer's resumption).
  const resume = new Map(first.record.parked!.unsaved.map((c) => [c.step.nodeId, c]));
  const wake = { nodeId: 'h', resumedBy: 'timer' as const, at: new Date(NOW + 6_000).toISOString() };
  const second = await run(nodes, { event, options: { retryParkMs: 5_000 }, resume: { checkpoints: resume, wake } });
  assert.equal(second.record.status, 'waiting', 'the second failure parks again');
  assert.equal(second.record.steps[0]!.attempts, 2);
  assert.deepEqual(second.record.steps[0]!.attemptErrors?.length, 1);
  const third = await run(nodes, {
    event,
    options: { retryParkMs: 5_000 },
    resume: { checkpoints: new Map(second.record.parked!.unsaved.map((c) => [c.step.nodeId, c])), wake },
  });
  assert.equal(third.record.status, 'succeeded', JSON.stringify(third.record));
  const step = third.record.steps[0]!;
  assert.equal(step.status, 'succeeded');
  assert.equal(step.attempts, 3);
  assert.equal(step.attemptErrors!.length, 2);
  assert.equal(step.retryAt, undefined);
  const keys = requestsTo('/keyed-2?park').map((r) => r.headers['idempotency-key']);
  assert.equal(keys.length, 3);
  assert.equal(new Set(keys).size, 1, 'the same Idempotency-Key after each wake');
  assert.equal(requestsTo('/ok?park').length, 1);
});

test('short delays keep sleeping in memory; inside a For each a long delay sleeps too, cut to LOOP_RETRY_MAX_SLEEP_MS', async () => {
  const short = await run([httpNode('h', 'GET', '/fail-1?short', { attempts: 2, backoff: 'fixed', delayMs: 4_999 })], { options: { retryParkMs: 5_000 } });
  assert.equal(short.record.status, 'succeeded');
  assert.deepEqual(short.sleeps, [4_999]);

  const loop = await run(
    [
      { id: 'each', type: 'for_each', params: { items: '{{= [1] }}' } },
      httpNode('h', 'GET', '/fail-1?loop', { attempts: 2, backoff: 'fixed', delayMs: 3_600_000, maxDelayMs: 3_600_000 }),
    ],
    {
      options: { retryParkMs: 5_000 },
      edges: [
        { from: 'trigger', to: 'each' },
        { from: 'each', to: 'h', branch: 'each' },
      ],
    },
  );
  assert.equal(loop.record.status, 'succeeded', JSON.stringify(loop.record));
  assert.deepEqual(loop.sleeps, [LOOP_RETRY_MAX_SLEEP_MS]);
});
