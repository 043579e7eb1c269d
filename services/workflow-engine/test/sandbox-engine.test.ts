// The engine as built (app.ts) runs user work in its sandbox pool: over real HTTP on a real engine +
// workspace-api (PGlite, or Postgres with DATABASE_URL), a tested Code step that never ends fails
// naming its limit, while the engine's own loop answers /healthz at once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

before(async () => {
  stack = await startEngineStack({ keys });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack));
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

test('a Code step hashing a large string in a loop fails naming the limit; /healthz answers within 250 ms meanwhile', async () => {
  const owner = randomUUID();
  const created = await call(owner, 'POST', '/api/v1/workflows', { name: 'Draft', triggerType: 'webhook', active: false, graph: { nodes: [], edges: [] } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = (created.body as { id: string }).id;
  // Warm: the engine's first Code step starts its sandbox workers (about a second under tsx), and the first /healthz opens a connection.
  const warm = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: { id: 'code_0', type: 'code', params: { code: 'return 1;' } } });
  assert.equal(warm.body.step.output, 1, JSON.stringify(warm.body));
  await (await fetch(`${engineUrl}/healthz`)).arrayBuffer();
  const code = `const s = 'x'.repeat(4000000); let h = ''; for (let i = 0; i < 2000; i++) h = flowdesk.hash('sha256', s + i); return h;`;
  const t = performance.now();
  const testing = call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: { id: 'code_1', type: 'code', params: { code } } });
  let done = false;
  void testing.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const h = performance.now();
    const res = await fetch(`${engineUrl}/healthz`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    latencies.push(performance.now() - h);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const res = await testing;
  const ms = performance.now() - t;
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.step.status, 'failed');
  assert.equal(res.body.step.error, 'the code ran longer than its limit of 1000 ms and was stopped');
  assert.ok(ms < 3_000, `answered after ${Math.round(ms)} ms`);
  // In process, the loop would be held the whole time: one probe, answered after the code. Here every
  // probe is answered promptly (one outlier allowed: the machine the tests run on is shared).
  latencies.sort((a, b) => b - a);
  assert.ok(latencies.length >= 3, `${latencies.length} probes`);
  assert.ok(latencies[1]! < 250 && latencies[0]! < 1_000, `/healthz took ${latencies.map(Math.round).join(', ')} ms while the code ran`);
});
