// Run this step is limited per owner (429, Retry-After, JSON body) and every test is recorded where
// its owner can read it (GET /workflows/:id/step-tests), over real HTTP on a real engine + workspace-api.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { generateSigningKeys, signInternalToken, type Service } from '@flowdesk/service-kit';
import { json, startEngineOn, startEngineStack, type EngineStack, type Received, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const received: Received[] = [];
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const LIMIT = 5;

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push(req);
      json(res, 201, { ok: true });
    },
  });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, { stepTestRateLimit: { max: LIMIT, windowMs: 60_000 } }));
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

async function workflowOf(owner: string): Promise<string> {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name: 'Draft', triggerType: 'webhook', active: false, graph: { nodes: [], edges: [] } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return (res.body as { id: string }).id;
}

test('step tests are limited per owner: past the limit 429 with Retry-After and a JSON body, nothing sent; another owner is not affected', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const node = { id: 'http_1', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/limited?token=tok-123`, body: { n: 1 } } };
  const sentBefore = received.length;
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 3; i++) statuses.push((await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node })).status);
  assert.deepEqual(statuses, [...Array(LIMIT).fill(200), 429, 429, 429]);
  assert.equal(received.length - sentBefore, LIMIT, 'a refused test sends nothing');

  const token = signInternalToken(keys, { sub: owner, aud: 'workflow-engine', scope: 'mcp:read mcp:write', azp: 'test' });
  const res = await fetch(`${engineUrl}/api/v1/workflows/${id}/test-step`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ node }),
  });
  assert.equal(res.status, 429);
  assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as { error: string; message: string };
  assert.equal(body.error, 'rate_limited');
  assert.match(body.message, /Too many step tests/);

  const other = randomUUID();
  const otherId = await workflowOf(other);
  assert.equal((await call(other, 'POST', `/api/v1/workflows/${otherId}/test-step`, { node })).status, 200);
});

test('every step test is recorded for its owner, newest first, with the request as recorded (secrets masked); another owner sees none', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const http = { id: 'http_1', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/rec?api_key=k-secret-1`, body: { n: 1 } } };
  const set = { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'a', value: '{{= $boom( }}' }] } };
  assert.equal((await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: http })).status, 200);
  assert.equal((await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: set })).status, 200);

  const list = await call(owner, 'GET', `/api/v1/workflows/${id}/step-tests`);
  assert.equal(list.status, 200, JSON.stringify(list.body));
  const items = list.body.items as { nodeId: string; nodeType: string; status: string; request: string | null; error: string | null; workflowId: string }[];
  assert.deepEqual(
    items.map((i) => [i.nodeId, i.nodeType, i.status]),
    [
      ['set_1', 'set_fields', 'failed'],
      ['http_1', 'http_request', 'succeeded'],
    ],
  );
  assert.ok(items[0]!.error, 'the failure is recorded');
  assert.match(items[1]!.request!, /^POST http:\/\/.*\/rec\?api_key=\*\*\*$/);
  assert.ok(!JSON.stringify(list.body).includes('k-secret-1'));
  assert.equal(items[1]!.workflowId, id);

  // Paged with the shared cursor.
  const first = await call(owner, 'GET', `/api/v1/workflows/${id}/step-tests?limit=1`);
  assert.equal(first.body.items.length, 1);
  const second = await call(owner, 'GET', `/api/v1/workflows/${id}/step-tests?limit=1&cursor=${first.body.nextCursor}`);
  assert.equal(second.body.items[0].nodeId, 'http_1');
  assert.equal(second.body.nextCursor, null);

  // Another owner: the workflow is not theirs (404).
  assert.equal((await call(randomUUID(), 'GET', `/api/v1/workflows/${id}/step-tests`)).status, 404);
});
