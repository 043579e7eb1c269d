/**
 * `npm run bench:expressions`: what one `{{= … }}` costs (docs/workflow-engine.md, "Expressions"):
 * compiling with JSONata against evaluating a compiled expression, per expression, in microseconds.
 * The engine compiles each source once (a cache in @flowdesk/contracts/expressions) and evaluates it per run.
 * Then the sandbox (docs/workflow-engine.md, "Isolation"): one job's round trip through the worker pool,
 * wall time and this thread's CPU, against evaluating inline; and a Code step's job.
 */
import jsonata from 'jsonata';
import { evaluateExpression, expressionRunsInline } from '@flowdesk/contracts/expressions';
import { SandboxPool } from '@flowdesk/workflow-engine';

const scope = {
  trigger: {
    qty: 3,
    price: 4.5,
    email: 'Ada@Example.com',
    created: '2026-11-26T10:00:00Z',
    labels: ['bug', 'vip'],
    lines: Array.from({ length: 10 }, (_, i) => ({ sku: `A${i}`, qty: i, price: 2.5 })),
  },
  nodes: {},
  now: new Date().toISOString(),
};
const EXPRESSIONS = [
  'trigger.qty * trigger.price',
  '$sum(trigger.lines.(qty * price))',
  '$lowercase(trigger.email)',
  "$fromMillis($toMillis(trigger.created) + 3 * 86400000, '[Y0001]-[M01]-[D01]')",
  '"vip" in trigger.labels',
];
const N = Number(process.env.N ?? 5_000);

console.log(`load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}, ${N} iterations each`);
for (const source of EXPRESSIONS) {
  let t = performance.now();
  for (let i = 0; i < N; i++) jsonata(source);
  const compile = ((performance.now() - t) * 1000) / N;
  await evaluateExpression(source, scope); // compiled once, cached
  t = performance.now();
  for (let i = 0; i < N; i++) await evaluateExpression(source, scope);
  const evaluate = ((performance.now() - t) * 1000) / N;
  console.log(`${source.padEnd(80)} compile ${compile.toFixed(1).padStart(6)} µs   evaluate (cached, with limits) ${evaluate.toFixed(1).padStart(6)} µs`);
}

const pool = new SandboxPool({ workers: 2 });
await pool.start();
const job = (sources: string[]) => ({ ownerId: 'bench', sources, scope: { ...scope, headers: {}, index: 1 } });
for (const sources of [
  ['index % 3'],
  ['$sum(trigger.lines.(qty * price))'],
  ['$lowercase(trigger.email)', '$sum(trigger.lines.qty)', '$count(trigger.labels)'],
]) {
  for (let i = 0; i < 200; i++) await pool.evaluate(job(sources));
  let cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < N; i++) await pool.evaluate(job(sources));
  const wall = ((performance.now() - t) * 1000) / N;
  let used = process.cpuUsage(cpu);
  const mainCpu = (used.user + used.system) / N;
  cpu = process.cpuUsage();
  for (let i = 0; i < N; i++) for (const s of sources) await evaluateExpression(s, { ...scope, index: 1 });
  used = process.cpuUsage(cpu);
  const inlineCpu = (used.user + used.system) / N;
  const label = `${sources.join(', ')} (${sources.map((s) => (expressionRunsInline(s) ? 'inline' : 'sandboxed')).join(', ')})`;
  console.log(
    `${label.padEnd(100)} pool job ${wall.toFixed(1).padStart(6)} µs wall, ${mainCpu.toFixed(1).padStart(6)} µs CPU on this thread   inline ${inlineCpu.toFixed(1).padStart(6)} µs CPU`,
  );
}
{
  const t = performance.now();
  const n = Math.min(N, 500);
  for (let i = 0; i < n; i++) await pool.runCode({ ownerId: 'bench', code: 'return trigger.qty * 2;', data: { ...scope, headers: {} } });
  console.log(
    `${'Code step `return trigger.qty * 2` (a fresh QuickJS runtime per job)'.padEnd(100)} pool job ${(((performance.now() - t) * 1000) / n).toFixed(1).padStart(6)} µs wall`,
  );
}
await pool.close();
