import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { EXPRESSION_LIMITS, ExpressionError } from '@flowdesk/contracts/expressions';
import { SandboxPool, type SandboxPoolOptions } from '../src/adapters/sandbox-pool.ts';
import { CODE_LIMITS, CodeError } from '../src/domain/code-sandbox.ts';
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
