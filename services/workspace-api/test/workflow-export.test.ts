// A workflow as a file and back (docs/workflow-export.md): GET /workflows/:id/export and POST
// /workflows/import over real HTTP. Export then import is the identity on the definition (secrets
// excepted); what an import cannot take is said per step and the workflow is still created,
// inactive; a malformed or hostile file is refused with its reason and nothing is created.
// Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SECRET_MASK, WORKFLOW_IMPORT_MAX_BYTES, WorkflowExport, type WorkflowGraph } from '@flowdesk/contracts';
import { Check } from 'typebox/value';
import { signInternalToken } from '@flowdesk/service-kit';
import { show, startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

/** Layout, retry and error settings, a disabled step, a credential by reference and one by name, an inline secret. */
const GRAPH: WorkflowGraph = {
  triggerPosition: { x: 0, y: 80 },
  nodes: [
    { id: 'verify', type: 'verify_signature', position: { x: 200, y: 80 }, params: { preset: 'github', credential: 'github-hook' } },
    {
      id: 'fetch',
      type: 'http_request',
      name: 'Fetch the order',
      position: { x: 420, y: 40 },
      retry: { attempts: 3, backoff: 'exponential', delayMs: 500 },
      onError: 'continue',
      params: { method: 'GET', url: 'https://api.example.test/orders/{{trigger.body.id}}', headers: { authorization: 'Bearer {{credentials.shop}}' } },
    },
    { id: 'task', type: 'create_task', position: { x: 640, y: 40 }, disabled: true, params: { title: 'Order {{nodes.fetch.body.id}}' } },
  ],
  edges: [
    { from: 'trigger', to: 'verify' },
    { from: 'verify', to: 'fetch', branch: 'true' },
    { from: 'fetch', to: 'task' },
  ],
};

let api: TestApi;
let user: TestUser;
before(async () => {
  api = await startTestApi();
  user = api.user();
});
after(() => api.close());

const listNames = async (u: TestUser) => ((await u.call('GET', '/api/v1/workflows?limit=100')).body.items as { name: string }[]).map((w) => w.name).sort();

/** The definition of a workflow as GET /workflows/:id answers it, without what differs between two workflows by nature. */
const definitionOf = (w: Record<string, unknown>) => {
  // An import pins the sample it carries (samplePin.source import); the original's may not be pinned.
  const { id: _id, createdAt: _c, updatedAt: _u, samplePayloadAt: _s, samplePin: _p, webhook, active: _a, ...rest } = w;
  return { ...rest, webhook: webhook ? { ...webhook, url: 'the workflow’s own' } : null };
};

describe('workflow export and import', () => {
  test('export then import gives the same definition: graph, layout, trigger, retry and error settings, a disabled step, tags, retention, sample', async () => {
    const target = await user.call('POST', '/api/v1/workflows', { name: 'On failure', triggerType: 'manual' });
    const created = await user.call('POST', '/api/v1/workflows', {
      name: 'Orders',
      description: 'From the shop',
      tags: ['shop', 'eu'],
      triggerType: 'webhook',
      triggerConfig: { responseMode: 'immediately', rateLimitPerSecond: 5 },
      graph: GRAPH,
      requireWebhookSecret: false,
      executionOrder: 'ordered',
      errorWorkflowId: target.body.id,
      retention: { days: 30 },
      active: true,
    });
    assert.equal(created.status, 201, show(created));
    const id = created.body.id as string;
    // The sample the editor pins (written by the engine from a delivery).
    const engineToken = signInternalToken(api.keys, { sub: user.id, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'workflow-engine' });
    const pinned = await user.call('PUT', `/internal/v1/workflows/${id}/sample-payload`, { body: { id: 7 } }, { authorization: `Bearer ${engineToken}` });
    assert.equal(pinned.status, 204, show(pinned));

    const exported = await user.call('GET', `/api/v1/workflows/${id}/export`);
    assert.equal(exported.status, 200, show(exported));
    assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename="Orders\.flowdesk\.json"$/);
    const file = exported.body;
    assert.ok(Check(WorkflowExport, file), 'the file matches its JSON Schema');
    assert.equal(file.format, 'flowdesk.workflow');
    assert.equal(file.formatVersion, 1);
    assert.deepEqual(file.credentials, [
      { name: 'github-hook', nodeIds: ['verify'] },
      { name: 'shop', nodeIds: ['fetch'] },
    ]);
    assert.equal(JSON.stringify(file).includes('webhookSecret'), false, 'no webhook secret');
    assert.deepEqual(file.workflow.tags, ['shop', 'eu'], 'the file carries the tags');
    assert.equal((file.workflow.graph.nodes[2] as { disabled?: boolean }).disabled, true, 'and the disabled flag');

    const imported = await user.call('POST', '/api/v1/workflows/import', file);
    assert.equal(imported.status, 201, show(imported));
    assert.deepEqual(imported.body.problems, []);
    assert.deepEqual(imported.body.credentials, file.credentials);
    const copy = imported.body.workflow;
    assert.notEqual(copy.id, id);
    assert.equal(copy.active, false, 'an import is never active');
    // A webhook workflow gets its own URL and a new secret.
    assert.match(copy.webhook.url, new RegExp(`/webhook-trigger/${copy.id}$`));
    const secrets = await Promise.all([id, copy.id].map(async (w) => (await user.call('GET', `/api/v1/workflows/${w}/webhook-secret`)).body.secret as string));
    assert.equal(typeof copy.webhookSecret, 'string');
    assert.equal(copy.webhookSecret, secrets[1]);
    assert.notEqual(secrets[0], secrets[1]);

    const original = (await user.call('GET', `/api/v1/workflows/${id}`)).body;
    const again = (await user.call('GET', `/api/v1/workflows/${copy.id}`)).body;
    assert.deepEqual(definitionOf(again), definitionOf(original));
    assert.deepEqual(again.samplePayload, { body: { id: 7 } });
    // And its history starts with the import.
    const versions = await user.call('GET', `/api/v1/workflows/${copy.id}/versions`);
    assert.deepEqual(
      versions.body.items.map((v: { number: number; message: string }) => [v.number, v.message]),
      [[1, 'Imported from a file']],
    );
    // Exporting the copy gives the same file (but for its time).
    const second = (await user.call('GET', `/api/v1/workflows/${copy.id}/export`)).body;
    assert.deepEqual({ ...second, exportedAt: null }, { ...file, exportedAt: null });
  });

  test('secrets never leave: an inline secret is masked in the file, and the import says the step needs it again', async () => {
    const created = await user.call('POST', '/api/v1/workflows', {
      name: 'Inline',
      triggerType: 'manual',
      graph: {
        nodes: [
          { id: 'call', type: 'http_request', params: { method: 'POST', url: 'https://api.example.test/x', headers: { 'x-api-key': 'sk_live_abc123' } } },
        ],
        edges: [{ from: 'trigger', to: 'call' }],
      },
    });
    const file = (await user.call('GET', `/api/v1/workflows/${created.body.id}/export`)).body;
    assert.equal(JSON.stringify(file).includes('sk_live_abc123'), false);
    assert.equal(file.workflow.graph.nodes[0].params.headers['x-api-key'], SECRET_MASK);
    const imported = await user.call('POST', '/api/v1/workflows/import', file);
    assert.equal(imported.status, 201, show(imported));
    assert.deepEqual(
      imported.body.problems.map((p: { nodeId: string; kind: string }) => [p.nodeId, p.kind]),
      [['call', 'needs_attention']],
    );
  });

  test('a step of an unknown type is left out with the steps reached only through it, said per step; the rest is created inactive', async () => {
    const other = api.user();
    const file = {
      format: 'flowdesk.workflow',
      formatVersion: 1,
      exportedAt: new Date().toISOString(),
      workflow: {
        name: 'From a newer server',
        description: '',
        triggerType: 'manual',
        triggerConfig: {},
        graph: {
          nodes: [
            { id: 'first', type: 'create_task', params: { title: 'A' } },
            { id: 'future', type: 'send_fax', params: { to: '+1 555' } },
            { id: 'after_future', type: 'create_note', params: { title: 'N', content: 'x' } },
            { id: 'after_first', type: 'create_note', params: { title: 'M', content: 'y' } },
          ],
          edges: [
            { from: 'trigger', to: 'first' },
            { from: 'first', to: 'future' },
            { from: 'future', to: 'after_future' },
            { from: 'first', to: 'after_first' },
          ],
        },
        requireWebhookSecret: true,
        executionOrder: 'parallel',
        errorWorkflowId: '00000000-0000-4000-8000-000000000000',
        retention: null,
        samplePayload: null,
      },
      credentials: [],
    };
    const res = await other.call('POST', '/api/v1/workflows/import', file);
    assert.equal(res.status, 201, show(res));
    assert.deepEqual(
      res.body.problems.map((p: { nodeId: string | null; kind: string }) => [p.nodeId, p.kind]),
      [
        ['future', 'left_out'],
        ['after_future', 'left_out'],
        [null, 'left_out'],
      ],
    );
    assert.match(res.body.problems[0].message, /"send_fax"/);
    assert.match(res.body.problems[2].message, /error workflow/);
    const wf = (await other.call('GET', `/api/v1/workflows/${res.body.workflow.id}`)).body;
    assert.equal(wf.active, false);
    assert.deepEqual(
      wf.graph.nodes.map((n: { id: string }) => n.id),
      ['first', 'after_first'],
    );
    assert.deepEqual(wf.graph.edges, [
      { from: 'trigger', to: 'first' },
      { from: 'first', to: 'after_first' },
    ]);
    assert.equal(wf.errorWorkflowId, null);
  });

  test('a malformed or hostile file is refused with its reason, and nothing is created', async () => {
    const u = api.user();
    const seed = await u.call('POST', '/api/v1/workflows', { name: 'Seed', triggerType: 'manual', graph: GRAPH });
    const good = (await u.call('GET', `/api/v1/workflows/${seed.body.id}/export`)).body;
    const withWorkflow = (w: Record<string, unknown>) => ({ ...good, workflow: { ...good.workflow, name: 'Refused', ...w } });
    const graphWith = (g: Partial<WorkflowGraph>) => withWorkflow({ graph: { ...good.workflow.graph, ...g } });
    const cases: [string, unknown, number, RegExp][] = [
      ['another format', { ...good, format: 'n8n' }, 400, /format is "n8n"/],
      ['a newer format version', { ...good, formatVersion: 2 }, 400, /formatVersion 2 is not one this server reads \(it reads 1\)/],
      ['no workflow', { format: 'flowdesk.workflow', formatVersion: 1 }, 400, /workflow/],
      ['a known step that does not match its type', graphWith({ nodes: [{ ...GRAPH.nodes[0]!, params: { preset: 'nope' } }] as never }), 400, /step "verify"/],
      ['a cycle', graphWith({ edges: [...GRAPH.edges, { from: 'task', to: 'fetch' }] }), 400, /cycle/],
      ['an edge to nowhere', graphWith({ edges: [...GRAPH.edges, { from: 'task', to: 'ghost' }] }), 400, /unknown node/],
      ['a step nothing reaches', graphWith({ edges: GRAPH.edges.slice(0, 2) }), 400, /"task" is not reachable/],
      ['bad trigger settings', withWorkflow({ triggerType: 'schedule', triggerConfig: { cron: 'every now and then' } }), 400, /triggerConfig/],
      ['too many steps', graphWith({ nodes: Array.from({ length: 101 }, (_, i) => ({ id: `n${i}`, type: 'stop', params: {} })) as never }), 400, /nodes/],
      ['a field it does not know', { ...good, extra: true }, 400, /extra/],
    ];
    for (const [what, body, status, reason] of cases) {
      const res = await u.call('POST', '/api/v1/workflows/import', body);
      assert.equal(res.status, status, `${what}: ${show(res)}`);
      assert.equal(res.body.error, 'validation_failed', what);
      assert.match(res.body.message, reason, what);
    }
    // Prototype pollution, as text (JSON.stringify would drop it): refused by the JSON parser.
    const proto = await u.call('POST', '/api/v1/workflows/import', JSON.stringify(good).replace('"workflow":{', '"workflow":{"__proto__":{"admin":true},'));
    assert.equal(proto.status, 400, show(proto));
    // Larger than the limit: 413 with the reason, before anything is read.
    const huge = withWorkflow({ description: 'x'.repeat(WORKFLOW_IMPORT_MAX_BYTES) });
    const big = await u.call('POST', '/api/v1/workflows/import', huge);
    assert.equal(big.status, 413, show(big));
    assert.equal(big.body.error, 'payload_too_large');
    assert.deepEqual(await listNames(u), ['Seed'], 'nothing was created');
  });

  test('export needs read, import write; another user’s workflow is not found', async () => {
    const owner = api.user();
    const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Mine', triggerType: 'manual' });
    const reader = api.user('mcp:read');
    const stranger = api.user();
    assert.equal((await stranger.call('GET', `/api/v1/workflows/${wf.body.id}/export`)).status, 404);
    const file = (await owner.call('GET', `/api/v1/workflows/${wf.body.id}/export`)).body;
    assert.equal((await reader.call('POST', '/api/v1/workflows/import', file)).status, 403);
  });
});
