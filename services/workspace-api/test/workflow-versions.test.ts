// Version history of a workflow (docs/workflow-versions.md): every save of the definition is a
// numbered version with its author and message; a version reads back the whole definition; a restore
// gives back that exact definition as a new version; the history is bounded; another user's
// workflow's history is not found. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { signInternalToken } from '@flowdesk/service-kit';
import { show, startTestApi, type TestApi, type TestUser } from './helpers/app.ts';
import { versionsKeep } from '../src/config.ts';

const GRAPH_A: WorkflowGraph = {
  nodes: [
    { id: 'fetch', type: 'http_request', position: { x: 120, y: 40 }, params: { method: 'GET', url: 'https://api.example.test/a' } },
    { id: 'task', type: 'create_task', params: { title: 'From {{nodes.fetch.body.id}}' } },
  ],
  edges: [
    { from: 'trigger', to: 'fetch' },
    { from: 'fetch', to: 'task' },
  ],
};
const GRAPH_B: WorkflowGraph = {
  nodes: [{ id: 'only', type: 'create_task', params: { title: 'B' } }],
  edges: [{ from: 'trigger', to: 'only' }],
};

let api: TestApi;
let user: TestUser;
before(async () => {
  api = await startTestApi();
  user = api.user();
});
after(() => api.close());

async function createWorkflow(u: TestUser, body: Record<string, unknown> = {}) {
  const res = await u.call('POST', '/api/v1/workflows', { name: 'Tickets', triggerType: 'manual', graph: GRAPH_A, ...body });
  assert.equal(res.status, 201, show(res));
  return res.body as { id: string };
}

/** The definition fields of a Workflow answer, as a version holds them. */
const definitionOfWorkflow = (w: Record<string, unknown>) => ({
  name: w.name,
  description: w.description,
  triggerType: w.triggerType,
  triggerConfig: w.triggerConfig,
  graph: w.graph,
  executionOrder: w.executionOrder,
  errorWorkflowId: w.errorWorkflowId,
  retention: w.retention,
});

describe('workflow versions', () => {
  test('creating makes version 1 and each save of the definition the next, with author, time and message', async () => {
    const wf = await createWorkflow(user);
    const patched = await user.call('PATCH', `/api/v1/workflows/${wf.id}`, { graph: GRAPH_B, versionMessage: 'Simplified' });
    assert.equal(patched.status, 200, show(patched));
    // Activating alone is not a change of the definition: no version.
    const activated = await user.call('PATCH', `/api/v1/workflows/${wf.id}`, { active: true });
    assert.equal(activated.status, 200, show(activated));
    await user.call('PATCH', `/api/v1/workflows/${wf.id}`, { name: 'Tickets (renamed)' });

    const list = await user.call('GET', `/api/v1/workflows/${wf.id}/versions`);
    assert.equal(list.status, 200, show(list));
    assert.deepEqual(
      list.body.items.map((v: { number: number; message: string | null }) => [v.number, v.message]),
      [
        [3, null],
        [2, 'Simplified'],
        [1, null],
      ],
    );
    const v2 = list.body.items[1];
    assert.deepEqual(v2.author, { userId: user.id, client: 'test' }, 'the author is the user and the client the save came through');
    assert.ok(Math.abs(Date.parse(v2.createdAt) - Date.now()) < 60_000, 'the version carries its time');
    assert.equal(list.body.nextCursor, null);

    const one = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/1`);
    assert.equal(one.status, 200, show(one));
    assert.deepEqual(one.body.definition.graph, GRAPH_A, 'version 1 holds the graph as created, positions included');
    assert.equal(one.body.definition.name, 'Tickets');
    const two = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/2`);
    assert.deepEqual(two.body.definition.graph, GRAPH_B);
  });

  test('a save that changes nothing makes no new version', async () => {
    const wf = await createWorkflow(user);
    await user.call('PATCH', `/api/v1/workflows/${wf.id}`, { graph: GRAPH_A });
    const list = await user.call('GET', `/api/v1/workflows/${wf.id}/versions`);
    assert.deepEqual(
      list.body.items.map((v: { number: number }) => v.number),
      [1],
    );
  });

  test('restoring a version gives back its exact definition, as a new version', async () => {
    const wf = await createWorkflow(user, {
      description: 'first',
      triggerType: 'schedule',
      triggerConfig: { cron: '0 * * * *', timezone: 'Europe/Berlin' },
      executionOrder: 'ordered',
      retention: { runs: 5 },
    });
    const original = await user.call('GET', `/api/v1/workflows/${wf.id}`);
    await user.call('PATCH', `/api/v1/workflows/${wf.id}`, {
      name: 'Broken edit',
      description: 'second',
      graph: GRAPH_B,
      triggerType: 'manual',
      triggerConfig: {},
      executionOrder: 'parallel',
      retention: null,
    });
    const restored = await user.call('POST', `/api/v1/workflows/${wf.id}/versions/1/restore`);
    assert.equal(restored.status, 200, show(restored));
    assert.deepEqual(definitionOfWorkflow(restored.body), definitionOfWorkflow(original.body), 'the workflow is its version 1 again');
    const now = await user.call('GET', `/api/v1/workflows/${wf.id}`);
    assert.deepEqual(definitionOfWorkflow(now.body), definitionOfWorkflow(original.body));

    const list = await user.call('GET', `/api/v1/workflows/${wf.id}/versions`);
    assert.deepEqual(
      list.body.items.map((v: { number: number; message: string | null }) => [v.number, v.message]),
      [
        [3, 'Restored version 1'],
        [2, null],
        [1, null],
      ],
    );
    const v3 = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/3`);
    const v1 = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/1`);
    assert.deepEqual(v3.body.definition, v1.body.definition);
  });

  test('a version that no longer exists is 404; an invalid number is 400', async () => {
    const wf = await createWorkflow(user);
    const missing = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/9`);
    assert.equal(missing.status, 404, show(missing));
    assert.equal(missing.body.error, 'not_found');
    const restore = await user.call('POST', `/api/v1/workflows/${wf.id}/versions/9/restore`);
    assert.equal(restore.status, 404, show(restore));
    const bad = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/zero`);
    assert.equal(bad.status, 400, show(bad));
    assert.equal(bad.body.error, 'validation_failed');
  });

  test("another user's workflow history answers like an unknown workflow", async () => {
    const wf = await createWorkflow(user);
    const other = api.user();
    for (const [method, path] of [
      ['GET', `/api/v1/workflows/${wf.id}/versions`],
      ['GET', `/api/v1/workflows/${wf.id}/versions/1`],
      ['POST', `/api/v1/workflows/${wf.id}/versions/1/restore`],
    ] as const) {
      const res = await other.call(method, path);
      assert.equal(res.status, 404, `${method} ${path}: ${show(res)}`);
    }
  });

  test('a read-only caller may list and read versions but not restore; inline secrets are masked', async () => {
    const id = user.id;
    const token = signInternalToken(api.keys, { sub: id, aud: 'workspace-api', scope: 'mcp:read', azp: 'mcp-gateway', client_id: 'Claude Desktop' });
    const secretGraph = {
      nodes: [
        { id: 'h', type: 'http_request', params: { method: 'GET', url: 'https://api.example.test/', headers: { authorization: 'Bearer sk_live_1234567890' } } },
      ],
      edges: [{ from: 'trigger', to: 'h' }],
    };
    const wf = await createWorkflow(user, { graph: secretGraph });
    const read = await user.call('GET', `/api/v1/workflows/${wf.id}/versions/1`, undefined, { authorization: `Bearer ${token}` });
    assert.equal(read.status, 200, show(read));
    assert.ok(!JSON.stringify(read.body).includes('sk_live_1234567890'), 'the inline secret is masked for a read-only caller');
    const restore = await user.call('POST', `/api/v1/workflows/${wf.id}/versions/1/restore`, undefined, { authorization: `Bearer ${token}` });
    assert.equal(restore.status, 403, show(restore));
  });

  test('pages through a long history with the list cursor', async () => {
    const wf = await createWorkflow(user);
    for (let i = 0; i < 4; i++) await user.call('PATCH', `/api/v1/workflows/${wf.id}`, { name: `n${i}` });
    const first = await user.call('GET', `/api/v1/workflows/${wf.id}/versions?limit=3`);
    assert.deepEqual(
      first.body.items.map((v: { number: number }) => v.number),
      [5, 4, 3],
    );
    assert.ok(first.body.nextCursor);
    const second = await user.call('GET', `/api/v1/workflows/${wf.id}/versions?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.deepEqual(
      second.body.items.map((v: { number: number }) => v.number),
      [2, 1],
    );
    assert.equal(second.body.nextCursor, null);
  });
});

describe('version retention', () => {
  test('keeps the newest WORKFLOW_VERSIONS_KEEP versions of each workflow; numbering continues', async () => {
    const small = await startTestApi({ versionsKeep: 3 });
    try {
      const u = small.user();
      const wf = await createWorkflow(u);
      const other = await createWorkflow(u);
      for (let i = 0; i < 5; i++) await u.call('PATCH', `/api/v1/workflows/${wf.id}`, { name: `edit ${i}` });
      const list = await u.call('GET', `/api/v1/workflows/${wf.id}/versions`);
      assert.deepEqual(
        list.body.items.map((v: { number: number }) => v.number),
        [6, 5, 4],
      );
      assert.equal((await u.call('GET', `/api/v1/workflows/${wf.id}/versions/3`)).status, 404, 'older versions are gone');
      const others = await u.call('GET', `/api/v1/workflows/${other.id}/versions`);
      assert.deepEqual(
        others.body.items.map((v: { number: number }) => v.number),
        [1],
        "another workflow's history is untouched",
      );
    } finally {
      await small.close();
    }
  });

  test('WORKFLOW_VERSIONS_KEEP: 100 by default, a whole number from 1 to 10000', () => {
    assert.equal(versionsKeep(undefined), 100);
    assert.equal(versionsKeep('7'), 7);
    for (const bad of ['0', '-1', '2.5', 'many', '10001']) assert.throws(() => versionsKeep(bad), /WORKFLOW_VERSIONS_KEEP/);
  });
});
