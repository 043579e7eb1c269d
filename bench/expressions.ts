/**
 * `npm run bench:expressions`: what one `{{= … }}` costs (docs/workflow-engine.md, "Expressions"):
 * compiling with JSONata against evaluating a compiled expression, per expression, in microseconds.
 * The engine compiles each source once (a cache in @flowdesk/contracts/expressions) and evaluates it per run.
 */
import jsonata from 'jsonata';
import { evaluateExpression } from '@flowdesk/contracts/expressions';

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
