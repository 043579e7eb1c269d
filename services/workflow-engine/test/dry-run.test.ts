// Dry run (POST /workflows/:id/dry-run, docs/workflow-engine.md "Dry run"): the editor's graph walked
// on the sample; side-effect-free steps execute, actions never do (no port is called, no request
// leaves, no task is created), their output is the assumed one or unknown.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { dryRun } from '../src/domain/dry-run.ts';
import type { WorkspaceNodesPort } from '../src/domain/ports.ts';
import { fixedClock, json, silentLog, startEngineOn, startEngineStack, type EngineStack, type Received, userCaller } from './support.ts';

/** trigger → Set Fields → Update Task (action) → Set Fields reading both → HTTP Request (action) → Send Email (action). */
const graph = (url: string): WorkflowGraph => ({
  nodes: [
    { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'who', value: 'Dear {{trigger.customer.name}}' }] } },
    { id: 'update_1', type: 'update_task', params: { taskId: '{{trigger.taskId}}', title: '{{nodes.set_1.who}}' } },
    {
      id: 'set_2',
      type: 'set_fields',
      params: {
        fields: [
          { name: 'greeting', value: '{{nodes.set_1.who}}!' },
          { name: 'task', value: '{{nodes.update_1.title}}' },
        ],
      },
    },
    { id: 'http_1', type: 'http_request', params: { method: 'POST', url, body: { text: '{{nodes.set_2.greeting}}' } } },
    { id: 'mail_1', type: 'send_email', params: { credential: 'smtp', to: 'ada@example.com', subject: '{{nodes.set_2.greeting}}', text: 'x' } },
    { id: 'code_1', type: 'code', params: { code: 'return { shout: nodes.set_2.greeting.toUpperCase() };' } },
  ],
  edges: [
    { from: 'trigger', to: 'set_1' },
    { from: 'set_1', to: 'update_1' },
    { from: 'update_1', to: 'set_2' },
    { from: 'set_2', to: 'http_1' },
    { from: 'http_1', to: 'mail_1' },
    { from: 'mail_1', to: 'code_1' },
  ],
});

describe('the dry run itself', () => {
  test('side-effect-free steps execute on the sample; no action port is called, actions are not_run with the assumed output', async () => {
    const calls: string[] = [];
    const spy: WorkspaceNodesPort = {
      updateTask: async () => (calls.push('updateTask'), { id: 't1', title: 'changed for real' }),
      create: async () => (calls.push('create'), { id: 'n1' }),
      findTasks: async () => (calls.push('findTasks'), { items: [], nextCursor: null }),
      getTask: async () => (calls.push('getTask'), {}),
      getProject: async () => (calls.push('getProject'), {}),
    };
    const result = await dryRun(
      {
        workflowId: randomUUID(),
        ownerId: randomUUID(),
        graph: graph('https://example.com/hook'),
        payload: { customer: { name: 'Ada' }, taskId: 't1' },
        assumed: { update_1: { id: 't1', title: 'from the last run' } },
      },
      {
        workspace: { createTask: async () => (calls.push('createTask'), {}), nodes: spy },
        clock: fixedClock(),
        log: silentLog,
        sandbox: inProcessSandbox,
      },
    );
    assert.deepEqual(calls, [], 'no port that acts was called');
    const byId = new Map(result.steps.map((s) => [s.nodeId, s]));
    assert.deepEqual(byId.get('set_1'), { nodeId: 'set_1', type: 'set_fields', status: 'succeeded', output: { who: 'Dear Ada' }, error: null });
    assert.equal(byId.get('update_1')?.status, 'not_run');
    assert.deepEqual(byId.get('update_1')?.output, { id: 't1', title: 'from the last run' }, 'the assumed output stands for the action');
    assert.deepEqual(byId.get('set_2')?.output, { greeting: 'Dear Ada!', task: 'from the last run' });
    assert.equal(byId.get('http_1')?.status, 'not_run');
    assert.equal(byId.get('http_1')?.output, null, 'no assumed output: unknown');
    assert.equal(byId.get('mail_1')?.status, 'not_run');
    assert.deepEqual(byId.get('code_1')?.output, { shout: 'DEAR ADA!' }, 'the walk goes on past the actions; Code runs in the sandbox');
    assert.equal(result.error, null);
  });

  test('a Condition takes its branch on the sample; a Wait is not waited for; a failing step does not end the dry run', async () => {
    const result = await dryRun(
      {
        workflowId: randomUUID(),
        ownerId: randomUUID(),
        graph: {
          nodes: [
            { id: 'if_1', type: 'condition', params: { rules: [{ left: '{{trigger.total}}', operator: 'greater_than', right: '10' }] } },
            { id: 'wait_1', type: 'wait', params: { mode: 'duration', amount: '3', unit: 'days' } },
            { id: 'bad_1', type: 'code', params: { code: 'throw new Error("nope")' } },
            { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'big', value: 'yes {{trigger.total}}' }] } },
            { id: 'set_2', type: 'set_fields', params: { fields: [{ name: 'small', value: 'no' }] } },
          ],
          edges: [
            { from: 'trigger', to: 'if_1' },
            { from: 'if_1', to: 'wait_1', branch: 'true' },
            { from: 'if_1', to: 'set_2', branch: 'false' },
            { from: 'wait_1', to: 'bad_1' },
            { from: 'bad_1', to: 'set_1' },
          ],
        },
        payload: { total: 42 },
        assumed: {},
      },
      { workspace: { createTask: () => Promise.reject(new Error('no')) }, clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
    );
    const byId = new Map(result.steps.map((s) => [s.nodeId, s]));
    assert.equal(byId.get('if_1')?.branch, 'true');
    assert.equal(byId.get('set_2')?.status, 'skipped', 'the branch not taken');
    assert.equal(byId.get('wait_1')?.status, 'not_run');
    assert.equal(byId.get('bad_1')?.status, 'failed');
    assert.match(byId.get('bad_1')?.error ?? '', /nope/);
    assert.deepEqual(byId.get('set_1')?.output, { big: 'yes 42' });
  });
});

describe('over HTTP, on a real engine and workspace-api', () => {
  const keys = generateSigningKeys();
  let stack: EngineStack;
  let engine: Service;
  let engineUrl: string;
  const received: Received[] = [];
  const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
  before(async () => {
    stack = await startEngineStack({ keys, receiver: (req, res) => (received.push(req), json(res, 200, { ok: true })) });
    ({ app: engine, url: engineUrl } = await startEngineOn(stack, { dryRunRateLimit: { max: 3, windowMs: 60_000 } }));
  });
  after(async () => {
    await engine?.close();
    await stack?.close();
  });

  test('answers every step, sends nothing and creates nothing; read access is enough; another owner is 404, a bad graph 400, too many 429', async () => {
    const owner = randomUUID();
    const created = await call(owner, 'POST', '/api/v1/workflows', { name: 'Draft', triggerType: 'webhook', graph: { nodes: [], edges: [] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    const g = graph(`${stack.receiver!.url}/hook`);
    g.nodes.push({ id: 'task_1', type: 'create_task', params: { title: '{{nodes.set_2.greeting}}' } });
    g.edges.push({ from: 'code_1', to: 'task_1' });

    const res = await call(owner, 'POST', `/api/v1/workflows/${id}/dry-run`, { graph: g, payload: { customer: { name: 'Ada' }, taskId: 't1' } }, 'mcp:read');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const byId = new Map((res.body.steps as { nodeId: string; status: string; output: unknown }[]).map((s) => [s.nodeId, s]));
    assert.equal((byId.get('set_2')?.output as { greeting: string }).greeting, 'Dear Ada!');
    assert.equal(byId.get('task_1')?.status, 'not_run');
    assert.equal(received.length, 0, 'the HTTP Request sent nothing');
    const tasks = await call(owner, 'GET', '/api/v1/tasks');
    assert.deepEqual(tasks.body.items, [], 'Create Task created nothing');
    assert.deepEqual((await call(owner, 'GET', `/api/v1/workflows/${id}/runs`)).body.items, [], 'no run is recorded');
    assert.ok(
      (res.body.warnings as string[]).some((w) => w.includes('update_1')),
      'a variable of an action with no assumed output is reported missing',
    );

    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflows/${id}/dry-run`, { graph: g })).status, 404);
    const bad = await call(owner, 'POST', `/api/v1/workflows/${id}/dry-run`, { graph: { nodes: [{ id: 'x', type: 'nope', params: {} }], edges: [] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
    const cyclic = await call(owner, 'POST', `/api/v1/workflows/${id}/dry-run`, {
      graph: {
        nodes: [
          { id: 'a', type: 'set_fields', params: { fields: [] } },
          { id: 'b', type: 'set_fields', params: { fields: [] } },
        ],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
        ],
      },
    });
    assert.equal(cyclic.status, 400, JSON.stringify(cyclic.body));
    assert.match(cyclic.body.message, /cycle/);

    // Two more fill the limit of 3 (the refused ones above were not counted), the next is 429.
    for (let i = 0; i < 2; i++) assert.equal((await call(owner, 'POST', `/api/v1/workflows/${id}/dry-run`, { graph: g })).status, 200);
    const limited = await call(owner, 'POST', `/api/v1/workflows/${id}/dry-run`, { graph: g });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error, 'rate_limited');
    assert.match(limited.body.message, /retry in \d+ s/);
  });
});
