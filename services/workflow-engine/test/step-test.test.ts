// Run this step (POST /workflows/:id/test-step) over real HTTP on a real engine + workspace-api
// (PGlite, or Postgres with DATABASE_URL): one node runs once against the sample and earlier outputs
// through the executor's own path (templates, expressions, SSRF guard), acts for real, records no run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { json, startEngineOn, startEngineStack, type EngineStack, type Received, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const received: Received[] = [];
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push(req);
      json(res, req.url === '/fail' ? 500 : 201, { ok: true, got: req.body });
    },
  });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack));
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

/** An inactive workflow of `owner` (the test needs no activation). */
async function workflowOf(owner: string): Promise<string> {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name: 'Draft', triggerType: 'webhook', active: false, graph: { nodes: [], edges: [] } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return (res.body as { id: string }).id;
}

test('an HTTP Request step renders the sample and earlier outputs, calls for real, answers input and output, and records no run', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const node = {
    id: 'http_1',
    type: 'http_request',
    params: { method: 'POST', url: `${stack.receiver!.url}/hook`, body: { name: '{{trigger.name}}', total: '{{= nodes.set_1.qty * 2 }}' } },
  };
  const res = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node, payload: { name: 'Ada' }, nodes: { set_1: { qty: 3 } } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const body = res.body;
  assert.equal(body.step.status, 'succeeded', JSON.stringify(body));
  assert.equal(body.step.nodeId, 'http_1');
  assert.deepEqual(body.step.input.body, { name: 'Ada', total: 6 });
  assert.equal(body.step.output.status, 201);
  assert.deepEqual(JSON.parse(body.step.output.body.got), { name: 'Ada', total: 6 });
  assert.deepEqual(JSON.parse(received.at(-1)!.body), { name: 'Ada', total: 6 });
  const runs = await call(owner, 'GET', `/api/v1/workflows/${id}/runs`);
  assert.equal(runs.status, 200);
  assert.deepEqual(runs.body.items, [], 'a tested step is no run');
});

test('a failing step answers 200 with the error; the SSRF guard refuses what a run would refuse', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const failing = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, {
    node: { id: 'http_1', type: 'http_request', onError: 'continue', params: { method: 'GET', url: `${stack.receiver!.url}/fail` } },
  });
  assert.equal(failing.status, 200);
  assert.equal(failing.body.step.status, 'failed', 'the node’s own on-error does not hide the failure in a test');
  assert.match(failing.body.step.error, /500/);
  const blocked = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, {
    node: { id: 'http_2', type: 'http_request', params: { method: 'GET', url: 'http://127.0.0.1:9/secret' } },
  });
  assert.equal(blocked.status, 200);
  assert.equal(blocked.body.step.status, 'failed');
  assert.match(blocked.body.step.error, /SSRF|blocked|not allowed/i);
});

test('Create Task acts for real, as the owner; a Condition answers its branch', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const res = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, {
    node: { id: 'task_1', type: 'create_task', params: { title: 'Call {{trigger.name}}' } },
    payload: { name: 'Grace' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.step.output.title, 'Call Grace');
  const tasks = await call(owner, 'GET', '/api/v1/tasks?limit=100');
  assert.ok(
    tasks.body.items.some((t: { title: string }) => t.title === 'Call Grace'),
    JSON.stringify(tasks.body),
  );
  const cond = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, {
    node: { id: 'condition_1', type: 'condition', params: { left: '{{trigger.amount}}', operator: 'greater_than', right: '100' } },
    payload: { amount: 50 },
  });
  assert.equal(cond.status, 200, JSON.stringify(cond.body));
  assert.equal(cond.body.branch, 'false');
  assert.deepEqual(cond.body.step.output, { result: false });
});

test('a step of a For each body is tried with the item and index it is given ({{item}}, {{index}}); without them they are missing, with a warning', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const node = { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'line', value: '{{index}}: {{item.sku}} x{{= item.qty * 2 }}' }] } };
  const res = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node, payload: {}, item: { sku: 'A-1', qty: 3 }, index: 2 });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.step.output, { line: '2: A-1 x6' });
  const bare = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, {
    node: { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'line', value: '{{index}}: {{item.sku}}' }] } },
    payload: {},
  });
  assert.equal(bare.status, 200, JSON.stringify(bare.body));
  assert.deepEqual(bare.body.step.output, { line: ': ' });
  assert.ok(
    bare.body.warnings.some((w: string) => /item/.test(w)),
    JSON.stringify(bare.body.warnings),
  );
});

test('the workspace nodes run too: Find Tasks reads the owner’s tasks', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const made = await call(owner, 'POST', '/api/v1/tasks', { title: 'Find me' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const res = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: { id: 'find_1', type: 'find_tasks', params: {} } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.step.status, 'succeeded', JSON.stringify(res.body.step));
  assert.deepEqual(
    res.body.step.output.items.map((t: { title: string }) => t.title),
    ['Find me'],
  );
});

test('refusals: another user’s workflow is 404, a node that fails the contract 400, read access 403', async () => {
  const owner = randomUUID();
  const id = await workflowOf(owner);
  const node = { id: 'stop_1', type: 'stop', params: { status: 'succeeded' } };
  assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflows/${id}/test-step`, { node })).status, 404);
  const bad = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node: { id: 'x_1', type: 'no_such_type', params: {} } });
  assert.equal(bad.status, 400);
  assert.equal(typeof bad.body.error, 'string', JSON.stringify(bad.body));
  assert.equal((await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node }, 'mcp:read')).status, 403);
  const ok = await call(owner, 'POST', `/api/v1/workflows/${id}/test-step`, { node });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.step.status, 'succeeded');
});
