import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { after, before, test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { EXPRESSION_LIMITS, ExpressionError } from '@flowdesk/contracts/expressions';
import { SandboxPool, type SandboxPoolOptions } from '../src/adapters/sandbox-pool.ts';
import { CODE_LIMITS, CodeError, SandboxThrottled } from '../src/domain/sandbox-port.ts';
import { executeWorkflow } from '../src/domain/executor.ts';
import type { Sandbox, SandboxScope } from '../src/domain/ports.ts';
import { TemplateRenderer } from '../src/domain/template.ts';
import { fixedClock, fixedEvent, noHttp, silentLog } from './support.ts';

// The limits of user work, enforced from outside it (docs/workflow-engine.md, "Isolation"). Each
// test bounds the time a limit takes to act: without the limit the job runs on (seconds to minutes).
const data: SandboxScope = { trigger: { s: 'x' }, headers: {}, nodes: {}, now: '2026-01-01T00:00:00.000Z' };
const pools: SandboxPool[] = [];
after(() => Promise.all(pools.map((p) => p.close())));

function pool(options: Partial<SandboxPoolOptions> = {}): SandboxPool {
  const p = new SandboxPool({ workers: 2, ...options });
  pools.push(p);
  return p;
}

/** A pool whose workers have started (they start lazily, under tsx in about a second). */
async function warm(options: Partial<SandboxPoolOptions> = {}): Promise<SandboxPool> {
  const p = pool(options);
  await p.start();
  return p;
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: Error }> {
  const t = performance.now();
  try {
    const value = await work;
    return { ms: performance.now() - t, value };
  } catch (error) {
    return { ms: performance.now() - t, error: error as Error };
  }
}

let shared: SandboxPool;
before(async () => {
  shared = await warm();
});

test('an endless loop fails naming the limit within 3 s; the pool serves the next job', async () => {
  const r = await timed(shared.runCode({ ownerId: 'a', code: 'while (true) {}', data }));
  assert.ok(r.error instanceof CodeError);
  assert.equal(r.error.message, 'the code ran longer than its limit of 1000 ms and was stopped');
  assert.ok(r.ms < 3_000, `stopped after ${Math.round(r.ms)} ms`);
  assert.equal(await shared.runCode({ ownerId: 'a', code: 'return trigger.s + 1', data }), 'x1');
});

test('time inside a host helper counts: hashing a large string over and over is stopped within 3 s', async () => {
  const code = `const s = 'x'.repeat(4000000); let h = ''; for (let i = 0; i < 2000; i++) h = flowdesk.hash('sha256', s + i); return h;`;
  const r = await timed(shared.runCode({ ownerId: 'a', code, data }));
  assert.equal(r.error?.message, 'the code ran longer than its limit of 1000 ms and was stopped');
  assert.ok(r.ms < 3_000, `stopped after ${Math.round(r.ms)} ms`);
});

test('recursion that catches its own stack overflow is stopped within 3 s', async () => {
  const r = await timed(shared.runCode({ ownerId: 'a', code: 'function f() { try { f() } catch { f() } } f();', data }));
  assert.ok(r.error instanceof CodeError, String(r.error));
  assert.match(r.error.message, /ran longer than its limit of 1000 ms and was stopped|recursed too deep/);
  assert.ok(r.ms < 3_000, `stopped after ${Math.round(r.ms)} ms`);
});

test('a catastrophic regex fed by the webhook payload fails the step naming the limit within 3 s (never "succeeded")', async () => {
  const graph: WorkflowGraph = {
    nodes: [{ id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'm', value: '{{= $match(trigger.s, /^(a+)+$/) }}' }] } }],
    edges: [{ from: 'trigger', to: 'set_1' }],
  };
  const event = fixedEvent('evt-regex', { s: 'a'.repeat(28) + '!' });
  const t = performance.now();
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: { http: noHttp, createTask: () => Promise.reject(new Error('none')), clock: fixedClock(), log: silentLog, sandbox: shared },
  });
  const ms = performance.now() - t;
  assert.equal(record.status, 'failed');
  assert.equal(record.error, 'node "set_1" failed: expression {{= $match(trigger.s, /^(a+)+$/) }} ran longer than its limit of 1000 ms and was stopped');
  assert.ok(ms < 3_000, `stopped after ${Math.round(ms)} ms`);
});

test('memory: a big allocation in Code hits QuickJS’s limit; one in an expression hits the worker’s heap limit, and the worker is replaced', async () => {
  const code = await timed(shared.runCode({ ownerId: 'a', code: `const a = []; a.push('x'.repeat(1 << 26)); return a.length;`, data }));
  assert.match(code.error?.message ?? '', /used more than its memory limit of 32 MB/);
  const small = await warm({ workers: 1, workerHeapMb: 24 });
  const expr = await timed(small.evaluate({ ownerId: 'a', sources: ['$count([1..100000].{"a": [1..20000]})'], scope: data }));
  assert.ok(expr.error instanceof ExpressionError, String(expr.error));
  assert.match(expr.error.message, /used more than its memory limit of 24 MB and was stopped/);
  assert.ok(expr.ms < 3_000, `stopped after ${Math.round(expr.ms)} ms`);
  assert.equal(small.ownerStats('a').memoryFailures, 1);
  assert.deepEqual(await small.evaluate({ ownerId: 'a', sources: ['$sum([1, 2])'], scope: data }), [3], 'a new worker serves the next job');
});

test('a job stopped at its deadline is counted as a timeout (owner stats, metric label) and its worker is replaced at once, so the pool stays at its size', async () => {
  // A catastrophic regex runs inside the regex engine, where JSONata's own time check never comes:
  // only the pool's deadline (limit + grace) ends it, by terminating the worker.
  const finished: { kind: string; outcome: string }[] = [];
  const p = await warm({
    workers: 1,
    expressionTimeoutMs: 300,
    graceMs: 50,
    metrics: { jobFinished: (kind, outcome) => finished.push({ kind, outcome }), throttled: () => {} },
  });
  assert.equal(p.size, 1);
  const slow = '$match($.trigger.s, /^(a+)+$/)';
  const r = await timed(p.evaluate({ ownerId: 't', sources: [slow], scope: { ...data, trigger: { s: 'a'.repeat(32) + '!' } } }));
  assert.ok(r.error instanceof ExpressionError, String(r.error));
  assert.equal(r.error.message, `expression {{= ${slow} }} ran longer than its limit of 300 ms and was stopped`);
  assert.ok(r.ms < 2_000, `stopped after ${Math.round(r.ms)} ms`);
  assert.equal(p.size, 1, 'a replacement worker is already starting (not only when the next job comes)');
  assert.deepEqual(finished, [{ kind: 'expressions', outcome: 'timeout' }]);
  const stats = p.ownerStats('t');
  assert.deepEqual([stats.jobs, stats.timeouts, stats.memoryFailures, stats.running], [1, 1, 0, 0]);
  assert.deepEqual(await p.evaluate({ ownerId: 't', sources: ['$sum([1, 2])'], scope: data }), [3], 'the replacement serves the next job');
  assert.deepEqual(finished.at(-1), { kind: 'expressions', outcome: 'ok' });
  assert.equal(p.ownerStats('t').timeouts, 1, 'a job that answered is no timeout');
});

test('after jobs stopped at their deadline the pool holds exactly its workers: a terminated worker’s exit starts no extra one', async () => {
  const p = await warm({ workers: 1, expressionTimeoutMs: 200, graceMs: 50 });
  const slow = '$match($.trigger.s, /^(a+)+$/)';
  for (let i = 0; i < 2; i++) {
    // The worker the deadline will terminate (read from the pool: its exit is the condition waited on).
    const doomed = (p as unknown as { slots: { worker: Worker }[] }).slots[0]!.worker;
    const exited = once(doomed, 'exit');
    const r = await timed(p.evaluate({ ownerId: 't', sources: [slow], scope: { ...data, trigger: { s: 'a'.repeat(32) + '!' } } }));
    assert.ok(r.error instanceof ExpressionError, String(r.error));
    // The pool's own exit listener was added first, so it has run when this resolves.
    await exited;
    await p.start();
    assert.equal(p.size, 1, `after ${i + 1} deadline stop(s) the pool has ${p.size} workers, configured 1`);
  }
  assert.deepEqual(await p.evaluate({ ownerId: 't', sources: ['$sum([1, 2])'], scope: data }), [3]);
  assert.equal(p.size, 1);
});

test('output and error text are capped (64 KB of error text, with a note)', async () => {
  const big = await timed(shared.runCode({ ownerId: 'a', code: `return 'x'.repeat(${CODE_LIMITS.maxOutputChars + 1});`, data }));
  assert.equal(big.error?.message, `the code returned more than ${CODE_LIMITS.maxOutputChars} characters of JSON`);
  const thrown = await timed(shared.runCode({ ownerId: 'a', code: `throw new Error('y'.repeat(5000000));`, data }));
  assert.ok(thrown.error instanceof CodeError);
  assert.ok(thrown.error.message.length <= CODE_LIMITS.maxErrorChars, `${thrown.error.message.length} characters`);
  assert.match(thrown.error.message, /^Error: yyyy.*\(error text cut: 500\d{4} characters, the limit is 65536\)$/s);
  const expr = await timed(shared.evaluate({ ownerId: 'a', sources: ['$error($pad("", 300000, "z"))'], scope: data }));
  assert.ok(expr.error instanceof ExpressionError);
  assert.ok(expr.error.message.length <= EXPRESSION_LIMITS.maxErrorChars, `${expr.error.message.length} characters`);
  assert.match(expr.error.message, /\(error text cut: \d+ characters, the limit is 65536\)$/);
});

test('while the pool runs endless loops, the main event loop answers HTTP and timers within 250 ms', async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  try {
    const loops = [1, 2, 3].map((i) => shared.runCode({ ownerId: `loop-${i}`, code: 'while (true) {}', data }).catch((e: Error) => e));
    let worstTimer = 0;
    let worstHttp = 0;
    const until = performance.now() + 1_500;
    while (performance.now() < until) {
      const t = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 10));
      worstTimer = Math.max(worstTimer, performance.now() - t - 10);
      const h = performance.now();
      assert.equal(await (await fetch(url)).text(), 'ok');
      worstHttp = Math.max(worstHttp, performance.now() - h);
    }
    for (const r of await Promise.all(loops)) assert.match(String(r), /ran longer than its limit/);
    assert.ok(worstTimer < 250, `a timer was ${Math.round(worstTimer)} ms late`);
    assert.ok(worstHttp < 250, `/healthz took ${Math.round(worstHttp)} ms`);
  } finally {
    server.close();
  }
});

const loop = (p: Sandbox, ownerId: string) => p.runCode({ ownerId, code: 'while (true) {}', data }).catch((e: Error) => e);

test('fairness: owners are served in turn, so owner B’s job waits for at most one of A’s 20 queued jobs per worker', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 2, codeTimeoutMs: 400 });
  const a = Array.from({ length: 20 }, () => loop(p, 'A'));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const b = await timed(p.runCode({ ownerId: 'B', code: 'return 42', data }));
  assert.equal(b.value, 42);
  // First come, first served, B would wait for all 20 (10 per worker, about 4 s).
  assert.ok(b.ms < 1_500, `B waited ${Math.round(b.ms)} ms`);
  assert.ok(p.ownerStats('A').queued >= 14, `A still has ${p.ownerStats('A').queued} queued`);
  await p.close();
  await Promise.all(a);
});

test('fairness: one owner holds at most perOwnerWorkers workers, so another owner’s job starts at once', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 1 });
  const a = Array.from({ length: 6 }, () => loop(p, 'A'));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(p.ownerStats('A').running, 1);
  const b = await timed(p.runCode({ ownerId: 'B', code: 'return 7', data }));
  assert.equal(b.value, 7);
  assert.ok(b.ms < 500, `B waited ${Math.round(b.ms)} ms (one of A's jobs lasts 1000 ms)`);
  await p.close();
  await Promise.all(a);
});

test('budget: an owner past its sandbox time per minute waits (not failed) while another owner runs', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 2, budgetMsPerMinute: 500, codeTimeoutMs: 300 });
  const failed: Error[] = [];
  const a = Array.from({ length: 6 }, () => loop(p, 'A').then((e) => failed.push(e as Error)));
  // Two jobs start; the first to end (300 ms) leaves 200 ms, so a third starts; then A is 400 ms past its
  // budget and, refilled at 500 ms per minute, waits about 50 s.
  while (p.ownerStats('A').jobs < 3) await new Promise((resolve) => setTimeout(resolve, 20));
  const b = await timed(Promise.all([1, 2, 3].map((n) => p.runCode({ ownerId: 'B', code: `return ${n}`, data }))));
  assert.deepEqual(b.value, [1, 2, 3]);
  assert.ok(b.ms < 1_000, `B waited ${Math.round(b.ms)} ms`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const stats = p.ownerStats('A');
  assert.equal(stats.running, 0, 'A is past its budget: none of its jobs runs');
  assert.equal(stats.queued, 3, 'A’s other jobs wait');
  assert.ok(stats.throttled >= 1);
  assert.equal(failed.length, 3, 'only the three that ran have failed (their time limit)');
  assert.equal(p.ownerStats('B').throttled, 0);
  await p.close();
  await Promise.all(a);
});

test('budget: a job whose run can park is handed back at once while its owner is past its budget, with times to try again spread out', async () => {
  // parkAfterMs out of the way: these jobs are handed back for the budget, not for waiting behind A's worker.
  const p = await warm({ workers: 2, perOwnerWorkers: 1, budgetMsPerMinute: 500, codeTimeoutMs: 300, parkAfterMs: 60_000 });
  // One job runs (300 ms, past the 500 ms budget after two); the others queue behind A's one worker.
  const first = Array.from({ length: 2 }, () => loop(p, 'A'));
  const queued = Array.from({ length: 3 }, () => p.runCode({ ownerId: 'A', code: 'return 1', data, parkWhenThrottled: true }).catch((e: Error) => e));
  await Promise.all(first);
  // A is past its budget: the queued parkable jobs are handed back instead of waiting about a minute in memory.
  const handed = await timed(Promise.all(queued));
  assert.ok(handed.ms < 1_000, `handed back after ${Math.round(handed.ms)} ms`);
  const errors = handed.value as Error[];
  for (const e of errors) assert.ok(e instanceof SandboxThrottled, String(e));
  const times = (errors as SandboxThrottled[]).map((e) => e.retryAt.getTime());
  assert.ok(times[0]! > Date.now() + 5_000, 'not before the budget is back above zero');
  assert.ok(times[1]! > times[0]! && times[2]! > times[1]!, 'one after another, not all at the same refill');
  // A new one is refused at once; one that cannot park still waits (not failed), and another owner runs.
  const refused = await timed(p.runCode({ ownerId: 'A', code: 'return 2', data, parkWhenThrottled: true }));
  assert.ok(refused.error instanceof SandboxThrottled && refused.ms < 100, `${refused.error} after ${refused.ms} ms`);
  let waited = false;
  const waiting = p.runCode({ ownerId: 'A', code: 'return 3', data }).then(
    () => (waited = true),
    () => (waited = true),
  );
  assert.equal(await p.runCode({ ownerId: 'B', code: 'return 4', data, parkWhenThrottled: true }), 4);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(waited, false, 'a job that cannot park waits for the budget');
  await p.close();
  await waiting;
});

test('budget: a Code step of an owner past its budget parks its run until the budget allows instead of holding its run slot', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 1, budgetMsPerMinute: 500, codeTimeoutMs: 300 });
  const event = fixedEvent('evt-budget', {});
  await Promise.all([loop(p, event.ownerId), loop(p, event.ownerId)]);
  const t = performance.now();
  const record = await executeWorkflow({
    workflow: {
      id: event.workflowId,
      ownerId: event.ownerId,
      graph: { nodes: [{ id: 'code_1', type: 'code', params: { code: 'return 1' } }], edges: [{ from: 'trigger', to: 'code_1' }] },
    },
    event,
    ports: { http: noHttp, createTask: () => Promise.reject(new Error('none')), clock: fixedClock(), log: silentLog, sandbox: p },
  });
  assert.ok(performance.now() - t < 1_000, 'the run did not wait for the budget');
  assert.equal(record.status, 'waiting', JSON.stringify(record));
  assert.equal(record.parked?.nodeId, 'code_1');
  assert.ok(record.parked.until! > new Date(), 'parked until the budget allows');
  assert.equal((record.steps[0]!.output as { waitingFor: string }).waitingFor, 'sandbox budget');
  await p.close();
});

test('workers: a job whose run can park, queued behind its owner’s busy workers past parkAfterMs, is handed back with times to try again; others wait', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 1, parkAfterMs: 100 });
  // A's one worker is busy for about a second; C holds the other worker.
  const busy = [loop(p, 'A'), loop(p, 'C')];
  while (p.ownerStats('A').running + p.ownerStats('C').running < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  const parkable = [1, 2, 3].map((n) => timed(p.runCode({ ownerId: 'A', code: `return ${n}`, data, parkWhenThrottled: true })));
  const waits = p.runCode({ ownerId: 'A', code: 'return 4', data });
  // B is under its cap: its job waits only for a worker to be free in its turn, and is not handed back.
  const bWaits = timed(p.runCode({ ownerId: 'B', code: 'return 5', data, parkWhenThrottled: true }));
  const handed = await Promise.all(parkable);
  for (const h of handed) {
    assert.ok(h.error instanceof SandboxThrottled && h.error.reason === 'workers', String(h.error ?? h.value));
    assert.ok(h.ms >= 90 && h.ms < 800, `handed back after ${Math.round(h.ms)} ms (A's worker is busy for 1000 ms)`);
  }
  const times = handed.map((h) => (h.error as SandboxThrottled).retryAt.getTime());
  assert.ok(times[0]! >= Date.now() + 50, 'not at once');
  assert.ok(times[1]! > times[0]! && times[2]! > times[1]!, 'one after another');
  assert.equal(p.ownerStats('A').parkedForWorkers, 3);
  // The job that cannot park (a step test's) waits for A's worker; B's runs once a worker is free.
  assert.equal(await waits, 4);
  const b = await bWaits;
  assert.equal(b.value, 5, String(b.error));
  assert.equal(p.ownerStats('B').parkedForWorkers, 0);
  await Promise.all(busy);
  await p.close();
});

test('workers: a step whose expressions wait behind its owner’s busy worker parks its run (waiting for a sandbox worker), holding no slot', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 1, parkAfterMs: 100 });
  const event = fixedEvent('evt-workers', { name: 'ada' });
  const busy = loop(p, event.ownerId);
  while (p.ownerStats(event.ownerId).running < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  const t = performance.now();
  const record = await executeWorkflow({
    workflow: {
      id: event.workflowId,
      ownerId: event.ownerId,
      graph: {
        nodes: [{ id: 'set', type: 'set_fields', params: { fields: [{ name: 'upper', value: '{{= $uppercase(trigger.name) }}' }] } }],
        edges: [{ from: 'trigger', to: 'set' }],
      },
    },
    event,
    ports: { http: noHttp, createTask: () => Promise.reject(new Error('none')), clock: fixedClock(), log: silentLog, sandbox: p },
  });
  assert.ok(performance.now() - t < 800, `the run waited ${Math.round(performance.now() - t)} ms (the worker is busy for 1000 ms)`);
  assert.equal(record.status, 'waiting', JSON.stringify(record));
  assert.equal(record.parked?.nodeId, 'set');
  assert.deepEqual(Object.keys(record.steps[0]!.output as object), ['waitingFor', 'until']);
  assert.equal((record.steps[0]!.output as { waitingFor: string }).waitingFor, 'sandbox worker');
  await busy;
  await p.close();
});

test('workers: a Wait whose duration is a sandboxed expression, parked for the worker, waits its own time when woken; a step test waits instead of parking', async () => {
  const p = await warm({ workers: 2, perOwnerWorkers: 1, parkAfterMs: 100 });
  const event = fixedEvent('evt-wait-workers', { seconds: '30' });
  const graph: WorkflowGraph = {
    nodes: [{ id: 'wait', type: 'wait', params: { mode: 'duration', amount: '{{= $string($number(trigger.seconds)) }}', unit: 'seconds' } }],
    edges: [{ from: 'trigger', to: 'wait' }],
  };
  const ports = { http: noHttp, createTask: () => Promise.reject(new Error('none')), clock: () => new Date(), log: silentLog, sandbox: p };
  const workflow = { id: event.workflowId, ownerId: event.ownerId, graph };
  const busy = loop(p, event.ownerId);
  while (p.ownerStats(event.ownerId).running < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  const parked = await executeWorkflow({ workflow, event, ports });
  assert.equal(parked.status, 'waiting', JSON.stringify(parked));
  assert.equal((parked.steps[0]!.output as { waitingFor: string }).waitingFor, 'sandbox worker');
  // A step test of the same step cannot park: it waits for the worker and answers the Wait's own park.
  const tested = await executeWorkflow({ workflow, event, ports, stepTest: {} });
  assert.equal((tested.steps[0]!.output as { waitingUntil?: string }).waitingUntil !== undefined, true, JSON.stringify(tested.steps[0]));
  await busy;
  // Woken by its timer (as the wait timers do), the Wait is not told it was resumed: it parks for its 30 s.
  const checkpoints = new Map(parked.parked!.unsaved.map((c) => [c.step.nodeId, c]));
  const woken = await executeWorkflow({
    workflow,
    event,
    ports,
    resume: { checkpoints, wake: { nodeId: 'wait', resumedBy: 'timer', at: new Date().toISOString() } },
  });
  assert.equal(woken.status, 'waiting', JSON.stringify(woken));
  const until = Date.parse((woken.steps[0]!.output as { waitingUntil: string }).waitingUntil);
  assert.ok(until > Date.now() + 20_000, `waits until ${new Date(until).toISOString()}`);
  await p.close();
});

test('a template sends a step’s sandboxed expressions as one job with the scope once; inline ones never reach the sandbox', async () => {
  const jobs: { ownerId: string; sources: readonly string[] }[] = [];
  const counting: Sandbox = {
    runCode: () => Promise.reject(new Error('no code here')),
    evaluate: (job) => (jobs.push({ ownerId: job.ownerId, sources: job.sources }), shared.evaluate(job)),
  };
  const renderer = new TemplateRenderer({ payload: { qty: 3, price: 2, name: 'ada' }, headers: {}, nodes: new Map(), sandbox: counting, ownerId: 'owner-1' });
  const params = {
    a: '{{= trigger.qty * trigger.price }}',
    b: '{{= $uppercase(trigger.name) }}',
    c: '{{= $count([1, 2, 3]) }} items',
    d: '{{= trigger.qty > 2 ? "many" : "few" }}',
  };
  await renderer.prepare(params, () => renderer.renderDeep(params));
  assert.deepEqual(renderer.renderDeep(params), { a: 6, b: 'ADA', c: '3 items', d: 'many' });
  assert.deepEqual(jobs, [{ ownerId: 'owner-1', sources: ['$uppercase(trigger.name)', '$count([1, 2, 3])'] }]);
});
