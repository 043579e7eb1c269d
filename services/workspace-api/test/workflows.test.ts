// Workflows through the HTTP API: creating every trigger type, listing with filters and cursors,
// editing, deleting, graph validation, the webhook secret (shown, regenerated, sealed at rest) and
// other users' workflows. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { TriggerType, WorkflowGraph } from '@flowdesk/contracts';
import { signInternalToken } from '@flowdesk/service-kit';
import { SecretBox } from '../src/domain/secret-box.ts';
import { PUBLIC_BASE_URL, rawCall, startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const TRIGGER_TYPES: TriggerType[] = ['webhook', 'manual', 'schedule', 'note', 'entity', 'error', 'form'];
const CONFIG_OF: Record<TriggerType, Record<string, unknown>> = {
  webhook: { every: '1h' },
  manual: { every: '1h' },
  schedule: { cron: '0 * * * *', timezone: 'Europe/Berlin' },
  note: { tag: 'inbox' },
  entity: { entity: 'task', events: ['completed'] },
  error: { every: '1h' },
  form: { title: 'Contact', fields: [{ name: 'email', label: 'Email', type: 'email', required: true }] },
};
const WORKFLOW_KEYS = [
  'active',
  'createdAt',
  'description',
  'errorWorkflowId',
  'executionOrder',
  'graph',
  'id',
  'name',
  'retention',
  'samplePayload',
  'samplePayloadAt',
  'samplePin',
  'tags',
  'triggerConfig',
  'triggerType',
  'updatedAt',
  'webhook',
];

const urlOf = (id: string) => `${PUBLIC_BASE_URL}/functions/v1/webhook-trigger/${id}`;

/** The answer is a Workflow (exactly its keys, well-typed values); `extra` lists keys allowed besides. */
function assertWorkflowShape(w: Record<string, unknown>, extra: string[] = []): void {
  assert.deepEqual(Object.keys(w).sort(), [...WORKFLOW_KEYS, ...extra].sort(), 'exactly the keys of a Workflow');
  assert.match(String(w.id), UUID_RE);
  assert.equal(typeof w.name, 'string');
  assert.equal(typeof w.description, 'string');
  assert.ok(TRIGGER_TYPES.includes(w.triggerType as TriggerType), `triggerType ${String(w.triggerType)}`);
  assert.equal(typeof w.active, 'boolean');
  const g = w.graph as WorkflowGraph;
  assert.ok(Array.isArray(g.nodes) && Array.isArray(g.edges), 'graph has nodes and edges');
  assert.equal(typeof w.triggerConfig, 'object');
  assert.match(String(w.createdAt), ISO_RE);
  assert.match(String(w.updatedAt), ISO_RE);
}

// A valid graph: HTTP Request -> Condition, true -> Create Task (optional fields filled in too).
const VALID_GRAPH: WorkflowGraph = {
  nodes: [
    {
      id: 'fetch',
      type: 'http_request',
      name: 'Fetch the ticket',
      params: {
        method: 'POST',
        url: 'https://api.example.test/tickets/{{trigger.ticket.id}}',
        headers: { accept: 'application/json', 'x-trace': '{{trigger.trace}}' },
        body: { query: '{{trigger.ticket.id}}', nested: [1, { deep: true }], none: null },
        timeoutMs: 5000,
      },
    },
    {
      id: 'check',
      type: 'condition',
      params: { left: '{{nodes.fetch.body.status}}', operator: 'equals', right: 'open' },
    },
    {
      id: 'follow_up',
      type: 'create_task',
      name: 'Create the follow-up',
      params: { title: 'Follow up {{trigger.ticket.id}}', dueDate: '2026-04-01', notes: 'from {{nodes.fetch.body.url}}' },
    },
  ],
  edges: [
    { from: 'trigger', to: 'fetch' },
    { from: 'fetch', to: 'check' },
    { from: 'check', to: 'follow_up', branch: 'true' },
  ],
};

const task = (id: string) => ({ id, type: 'create_task', params: { title: `task ${id}` } });
const condition = (id: string) => ({ id, type: 'condition', params: { left: '{{trigger.x}}', operator: 'exists' } });
const http = (id: string, method = 'GET') => ({ id, type: 'http_request', params: { method, url: 'https://example.test/' } });

let api: TestApi;

before(async () => {
  api = await startTestApi();
});

after(async () => {
  await api?.close();
});

async function create(user: TestUser, body: Record<string, unknown>) {
  const res = await user.call('POST', '/api/v1/workflows', body);
  assert.equal(res.status, 201, `create: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any> & { id: string; webhookSecret: string | null };
}

/** Collects every page of a listing, following nextCursor until it is null. */
async function allPages(user: TestUser, path: string, limit: number) {
  const pages: Record<string, any>[][] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const url: string = `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await user.call('GET', url);
    assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
    pages.push(res.body.items);
    cursors.push(res.body.nextCursor);
    cursor = res.body.nextCursor;
    if (cursor === null) return { pages, cursors };
  }
  assert.fail('pagination did not end');
}

describe('create', () => {
  for (const triggerType of TRIGGER_TYPES) {
    test(`a ${triggerType} workflow: 201 with the Workflow shape, stored as sent`, async () => {
      const u = api.user();
      // Settings valid for each type (libs/contracts triggers.ts); webhook and manual take any object.
      const triggerConfig = CONFIG_OF[triggerType];
      const res = await u.call('POST', '/api/v1/workflows', {
        name: `My ${triggerType} flow`,
        description: 'does things',
        triggerType,
        triggerConfig,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const w = res.body;
      assertWorkflowShape(w, ['webhookSecret']);
      assert.equal(w.name, `My ${triggerType} flow`);
      assert.equal(w.description, 'does things');
      assert.equal(w.triggerType, triggerType);
      assert.equal(w.active, false, 'a new workflow is inactive unless asked');
      assert.deepEqual(w.graph, { nodes: [], edges: [] }, 'an empty graph by default');
      assert.deepEqual(w.triggerConfig, triggerConfig);
      assert.equal(w.samplePayload, null);
      assert.equal(w.samplePayloadAt, null);
      assert.equal(w.samplePin, null, 'no sample pinned');

      if (triggerType === 'webhook') {
        assert.equal(typeof w.webhookSecret, 'string');
        assert.ok(w.webhookSecret.startsWith('whsec_'), w.webhookSecret);
        assert.ok(w.webhookSecret.length >= 40, `secret long enough: ${w.webhookSecret.length}`);
        assert.deepEqual(w.webhook, { url: urlOf(w.id), requireSecret: true, authentication: 'secret-header' });
      } else {
        assert.equal(w.webhookSecret, null);
        assert.equal(w.webhook, null);
      }

      // It was stored: GET answers the same workflow, without any secret.
      const got = await u.call('GET', `/api/v1/workflows/${w.id}`);
      assert.equal(got.status, 200);
      assertWorkflowShape(got.body);
      const { webhookSecret: _secret, ...rest } = w;
      assert.deepEqual(got.body, rest);
    });
  }

  test('defaults are applied: only name and trigger type given', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Bare', triggerType: 'manual' });
    assert.equal(w.description, '');
    assert.deepEqual(w.triggerConfig, {});
    assert.deepEqual(w.graph, { nodes: [], edges: [] });
    assert.equal(w.active, false);
  });

  test('active and requireWebhookSecret:false are honoured; each webhook gets its own secret', async () => {
    const u = api.user();
    const a = await create(u, { name: 'Open hook', triggerType: 'webhook', active: true, requireWebhookSecret: false });
    const b = await create(u, { name: 'Second hook', triggerType: 'webhook' });
    assert.equal(a.active, true);
    assert.deepEqual(a.webhook, { url: urlOf(a.id), requireSecret: false, authentication: 'none' });
    assert.notEqual(a.webhookSecret, b.webhookSecret, 'secrets are not shared between workflows');
  });

  test('the secret is shown once: GET and the listing never contain it', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    const got = await u.call('GET', `/api/v1/workflows/${w.id}`);
    const list = await u.call('GET', '/api/v1/workflows');
    assert.equal(got.status, 200);
    assert.equal(list.status, 200);
    assert.ok(!('webhookSecret' in got.body));
    assert.ok(!JSON.stringify(got.body).includes(w.webhookSecret!), 'GET does not leak the secret');
    assert.ok(!JSON.stringify(list.body).includes(w.webhookSecret!), 'the listing does not leak the secret');
  });

  test('invalid bodies: 400 validation_failed naming the field, and nothing is created', async () => {
    const u = api.user();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: '', triggerType: 'manual' }, /name/],
      [{ name: 'x', triggerType: 'cron' }, /triggerType/],
      [{ triggerType: 'manual' }, /name/],
      [{ name: 'x', triggerType: 'manual', webhookSecretCipher: 'v1.a.b.c' }, /webhookSecretCipher/],
    ];
    for (const [body, re] of cases) {
      const res = await u.call('POST', '/api/v1/workflows', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, re, JSON.stringify(body));
    }
    const list = await u.call('GET', '/api/v1/workflows');
    assert.deepEqual(list.body.items, []);
  });

  test('without a token: 401 unauthorized', async () => {
    const res = await rawCall(api.baseUrl, 'POST', '/api/v1/workflows', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', triggerType: 'manual' }),
    });
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'unauthorized');
  });
});

describe('list', () => {
  let u: TestUser;
  const ids: Record<string, string> = {};

  before(async () => {
    u = api.user();
    const specs = [
      { key: 'invoice', name: 'Invoice sync', description: 'Pushes invoices to accounting', triggerType: 'webhook', active: true },
      { key: 'daily', name: 'Daily digest', description: 'Morning summary', triggerType: 'schedule', active: true, triggerConfig: { cron: '0 8 * * *' } },
      { key: 'manual', name: 'Manual cleanup', description: 'Archive old INVOICES', triggerType: 'manual', active: false },
      { key: 'note', name: 'Note to task', description: '', triggerType: 'note', active: false },
      { key: 'hook2', name: 'Second webhook', description: 'Deploy hook', triggerType: 'webhook', active: false },
    ];
    for (const { key, ...body } of specs) ids[key] = (await create(u, body)).id;
  });

  const listIds = async (query: string) => {
    const res = await u.call('GET', `/api/v1/workflows${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const w of res.body.items) assertWorkflowShape(w);
    return (res.body.items as { id: string }[]).map((w) => w.id).sort();
  };
  const sorted = (...keys: string[]) => keys.map((k) => ids[k]!).sort();

  test('without filters: exactly this user’s five workflows, newest first', async () => {
    const res = await u.call('GET', '/api/v1/workflows');
    assert.equal(res.status, 200);
    assert.equal(res.body.nextCursor, null);
    const items = res.body.items as { id: string; createdAt: string }[];
    assert.deepEqual(items.map((w) => w.id).sort(), sorted('invoice', 'daily', 'manual', 'note', 'hook2'));
    for (let i = 1; i < items.length; i++) {
      assert.ok(Date.parse(items[i - 1]!.createdAt) >= Date.parse(items[i]!.createdAt), 'newest first');
    }
  });

  test('active=true / active=false', async () => {
    assert.deepEqual(await listIds('?active=true'), sorted('invoice', 'daily'));
    assert.deepEqual(await listIds('?active=false'), sorted('manual', 'note', 'hook2'));
  });

  test('triggerType, alone and with active', async () => {
    assert.deepEqual(await listIds('?triggerType=webhook'), sorted('invoice', 'hook2'));
    assert.deepEqual(await listIds('?triggerType=schedule'), sorted('daily'));
    assert.deepEqual(await listIds('?triggerType=entity'), []);
    assert.deepEqual(await listIds('?triggerType=webhook&active=false'), sorted('hook2'));
  });

  test('q searches name and description, case-insensitively', async () => {
    assert.deepEqual(await listIds('?q=invoice'), sorted('invoice', 'manual'), 'name and description (INVOICES) match');
    assert.deepEqual(await listIds('?q=DIGEST'), sorted('daily'));
    assert.deepEqual(await listIds('?q=deploy'), sorted('hook2'), 'description only');
    assert.deepEqual(await listIds('?q=invoice&active=false'), sorted('manual'));
    assert.deepEqual(await listIds('?q=nothing-like-this'), []);
  });

  test('q is a plain substring: % and _ in it are literal characters, not wildcards', async () => {
    const w = api.user();
    const made: Record<string, string> = {};
    for (const name of ['plain words', '100% done', 'snake_case']) made[name] = (await create(w, { name, triggerType: 'manual' })).id;
    const names = async (q: string) =>
      ((await w.call('GET', `/api/v1/workflows?q=${encodeURIComponent(q)}`)).body.items as { name: string }[]).map((x) => x.name).sort();
    assert.deepEqual([await names('%'), await names('_')], [['100% done'], ['snake_case']]);
  });

  test('an unknown trigger type or a bogus cursor: 400 validation_failed', async () => {
    const bad = await u.call('GET', '/api/v1/workflows?triggerType=cron');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
    const cur = await u.call('GET', '/api/v1/workflows?cursor=not-a-cursor');
    assert.equal(cur.status, 400);
    assert.equal(cur.body.error, 'validation_failed');
    assert.match(cur.body.message, /cursor/);
  });

  test('limit=2: three pages that do not overlap, cover all five in order, and end with nextCursor null', async () => {
    const full = await u.call('GET', '/api/v1/workflows?limit=100');
    const expected = (full.body.items as { id: string }[]).map((w) => w.id);
    const { pages, cursors } = await allPages(u, '/api/v1/workflows', 2);
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.equal(typeof cursors[0], 'string');
    assert.equal(typeof cursors[1], 'string');
    assert.equal(cursors[2], null);
    const seen = pages.flat().map((w) => w.id as string);
    assert.equal(new Set(seen).size, seen.length, 'no workflow on two pages');
    assert.deepEqual(seen, expected, 'the pages together are the full listing, same order');
  });

  test('pagination with a filter: limit=1 over the two active ones', async () => {
    const { pages } = await allPages(u, '/api/v1/workflows?active=true', 1);
    assert.deepEqual(
      pages.map((p) => p.length),
      [1, 1],
    );
    assert.deepEqual(
      pages
        .flat()
        .map((w) => w.id)
        .sort(),
      sorted('invoice', 'daily'),
    );
  });

  test('another user’s listing is empty', async () => {
    const other = api.user();
    const res = await other.call('GET', '/api/v1/workflows');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { items: [], nextCursor: null });
  });
});

describe('get, patch, delete', () => {
  test('GET an unknown id: 404 not_found; a malformed id: 400', async () => {
    const u = api.user();
    const res = await u.call('GET', `/api/v1/workflows/${randomUUID()}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
    const bad = await u.call('GET', '/api/v1/workflows/not-a-uuid');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
  });

  test('rename: answered and stored, other fields untouched', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Old name', description: 'keep me', triggerType: 'schedule', graph: VALID_GRAPH });
    const res = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { name: 'New name' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assertWorkflowShape(res.body);
    assert.equal(res.body.name, 'New name');
    assert.equal(res.body.description, 'keep me');
    assert.equal(res.body.triggerType, 'schedule');
    assert.deepEqual(res.body.graph, VALID_GRAPH);
    assert.equal(res.body.createdAt, w.createdAt);
    assert.ok(Date.parse(res.body.updatedAt) >= Date.parse(w.updatedAt));
    const got = await u.call('GET', `/api/v1/workflows/${w.id}`);
    assert.deepEqual(got.body, res.body);
  });

  test('activate and deactivate', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Toggle', triggerType: 'manual' });
    const on = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { active: true });
    assert.equal(on.status, 200);
    assert.equal(on.body.active, true);
    assert.deepEqual(
      (await u.call('GET', '/api/v1/workflows?active=true')).body.items.map((x: { id: string }) => x.id),
      [w.id],
    );
    const off = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { active: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.active, false);
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}`)).body.active, false);
  });

  test('change the graph: the new graph is returned and stored', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Graph', triggerType: 'manual' });
    const res = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { graph: VALID_GRAPH });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.graph, VALID_GRAPH);
    const smaller: WorkflowGraph = { nodes: [task('only') as WorkflowGraph['nodes'][number]], edges: [{ from: 'trigger', to: 'only' }] };
    const again = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { graph: smaller });
    assert.equal(again.status, 200);
    assert.deepEqual((await u.call('GET', `/api/v1/workflows/${w.id}`)).body.graph, smaller, 'the graph is replaced, not merged');
  });

  test('switch manual → webhook: a secret is generated and can be revealed afterwards', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Becomes a hook', triggerType: 'manual' });
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`)).status, 404, 'no secret before');

    const res = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { triggerType: 'webhook' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.triggerType, 'webhook');
    assert.deepEqual(res.body.webhook, { url: urlOf(w.id), requireSecret: true, authentication: 'secret-header' });

    const reveal = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(reveal.status, 200, JSON.stringify(reveal.body));
    assert.equal(reveal.body.workflowId, w.id);
    assert.ok(reveal.body.secret.startsWith('whsec_') && reveal.body.secret.length >= 40, reveal.body.secret);
    assert.equal(reveal.body.url, urlOf(w.id));
    const again = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(again.body.secret, reveal.body.secret, 'the secret is stable between reveals');
  });

  test('switch webhook → manual: webhook null and no secret to reveal', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Was a hook', triggerType: 'webhook' });
    const res = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { triggerType: 'manual' });
    assert.equal(res.status, 200);
    assert.equal(res.body.webhook, null);
    const reveal = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(reveal.status, 404);
    assert.equal(reveal.body.error, 'not_found');
  });

  test('requireWebhookSecret can be turned off and on', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    const off = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { requireWebhookSecret: false });
    assert.deepEqual(off.body.webhook, { url: urlOf(w.id), requireSecret: false, authentication: 'none' });
    const on = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { requireWebhookSecret: true });
    assert.deepEqual(on.body.webhook, { url: urlOf(w.id), requireSecret: true, authentication: 'secret-header' });
  });

  test('PATCH with an empty body or an unknown field: 400; an unknown id: 404', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Keep', triggerType: 'manual' });
    const empty = await u.call('PATCH', `/api/v1/workflows/${w.id}`, {});
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error, 'validation_failed');
    const unknown = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { owner: 'someone' });
    assert.equal(unknown.status, 400);
    const missing = await u.call('PATCH', `/api/v1/workflows/${randomUUID()}`, { name: 'x' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'not_found');
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}`)).body.name, 'Keep');
  });

  test('delete: 204, then 404 on GET and on a second DELETE', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Doomed', triggerType: 'webhook' });
    const keep = await create(u, { name: 'Survivor', triggerType: 'manual' });

    const del = await u.call('DELETE', `/api/v1/workflows/${w.id}`);
    assert.equal(del.status, 204);
    assert.equal(del.body, undefined, 'no body');
    const got = await u.call('GET', `/api/v1/workflows/${w.id}`);
    assert.equal(got.status, 404);
    assert.equal(got.body.error, 'not_found');
    assert.equal((await u.call('DELETE', `/api/v1/workflows/${w.id}`)).status, 404);
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`)).status, 404);
    const list = await u.call('GET', '/api/v1/workflows');
    assert.deepEqual(
      list.body.items.map((x: { id: string }) => x.id),
      [keep.id],
      'only the other workflow is left',
    );
  });
});

describe('graph validation', () => {
  type Case = { name: string; graph: unknown; message: RegExp };
  const cases: Case[] = [
    {
      name: 'duplicate node ids',
      graph: { nodes: [task('a'), task('a')], edges: [{ from: 'trigger', to: 'a' }] },
      message: /two nodes with id "a"/,
    },
    {
      name: 'an edge to an unknown node',
      graph: {
        nodes: [task('a')],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'a', to: 'ghost' },
        ],
      },
      message: /a -> ghost.*unknown node/,
    },
    {
      name: 'an edge from an unknown node',
      graph: {
        nodes: [task('a')],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'ghost', to: 'a' },
        ],
      },
      message: /ghost -> a.*unknown node/,
    },
    {
      name: 'a branch on an edge that does not leave a condition',
      graph: {
        nodes: [http('fetch'), task('t')],
        edges: [
          { from: 'trigger', to: 'fetch' },
          { from: 'fetch', to: 't', branch: 'true' },
        ],
      },
      message: /fetch -> t has a branch but fetch is not a condition/,
    },
    {
      name: "a switch's branch on an edge leaving a condition",
      graph: {
        nodes: [condition('check'), task('t')],
        edges: [
          { from: 'trigger', to: 'check' },
          { from: 'check', to: 't', branch: 'default' },
        ],
      },
      message: /check -> t names branch "default", which a condition does not have \("true", "false"\)/,
    },
    {
      name: 'an edge leaving a condition without branch',
      graph: {
        nodes: [condition('check'), task('t')],
        edges: [
          { from: 'trigger', to: 'check' },
          { from: 'check', to: 't' },
        ],
      },
      message: /check -> t leaves a condition without branch/,
    },
    {
      name: 'a cycle',
      graph: {
        nodes: [task('a'), task('b'), task('c')],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'a' },
        ],
      },
      message: /cycle through node "a"/,
    },
    {
      name: 'an unreachable node',
      graph: { nodes: [task('a'), task('island')], edges: [{ from: 'trigger', to: 'a' }] },
      message: /node "island" is not reachable/,
    },
    {
      name: 'an unknown node type',
      graph: { nodes: [{ id: 'mail', type: 'send_email', params: { to: 'x@example.test' } }], edges: [{ from: 'trigger', to: 'mail' }] },
      message: /graph\.nodes\.0\.type/,
    },
    {
      name: 'an expression that does not parse',
      graph: {
        nodes: [task('a'), { id: 'b', type: 'create_task', params: { title: 'Total {{= $sum(trigger.lines.(qty * price) }}' } }],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'a', to: 'b' },
        ],
      },
      message:
        /^body\.graph\.nodes\.1\.params\.title \(node "b"\): expression \{\{= \$sum\(trigger\.lines\.\(qty \* price\) \}\} is not valid: .+ \(at character \d+\)/,
    },
    {
      name: 'an expression without its closing braces, inside an HTTP body written as JSON',
      graph: {
        nodes: [{ id: 'h', type: 'http_request', params: { method: 'POST', url: 'https://example.com', body: '{"items": ["{{= trigger.x "]}' } }],
        edges: [{ from: 'trigger', to: 'h' }],
      },
      message: /^body\.graph\.nodes\.0\.params\.body\.items\.0 \(node "h"\): has an expression "\{\{= trigger\.x " without its closing \}\}/,
    },
    {
      name: 'an HTTP node with method TRACE',
      graph: { nodes: [http('fetch', 'TRACE')], edges: [{ from: 'trigger', to: 'fetch' }] },
      message: /graph\.nodes\.0\.params\.method/,
    },
  ];

  let u: TestUser;
  let existing: Record<string, any>;

  before(async () => {
    u = api.user();
    existing = await create(u, { name: 'Existing', triggerType: 'manual', graph: VALID_GRAPH });
  });

  for (const c of cases) {
    test(`${c.name}: 400 validation_failed on create and on patch, nothing stored`, async () => {
      const res = await u.call('POST', '/api/v1/workflows', { name: c.name, triggerType: 'manual', graph: c.graph });
      assert.equal(res.status, 400, `create: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, c.message);

      const patch = await u.call('PATCH', `/api/v1/workflows/${existing.id}`, { graph: c.graph, name: 'changed' });
      assert.equal(patch.status, 400, `patch: ${JSON.stringify(patch.body)}`);
      assert.equal(patch.body.error, 'validation_failed');
      assert.match(patch.body.message, c.message);

      const got = await u.call('GET', `/api/v1/workflows/${existing.id}`);
      assert.equal(got.body.name, 'Existing', 'a refused patch changes nothing');
      assert.deepEqual(got.body.graph, VALID_GRAPH);
      const list = await u.call('GET', '/api/v1/workflows');
      assert.deepEqual(
        list.body.items.map((x: { id: string }) => x.id),
        [existing.id],
        'no workflow was created',
      );
    });
  }

  test('a node may not take the reserved id "trigger" (it would pass as reachable without any edge into it)', async () => {
    const other = api.user();
    const res = await other.call('POST', '/api/v1/workflows', {
      name: 'Reserved id',
      triggerType: 'manual',
      graph: { nodes: [task('trigger')], edges: [] },
    });
    assert.deepEqual([res.status, res.body.error], [400, 'validation_failed']);
  });

  test('HTTP Request → Condition (true → Create Task) is accepted and returned unchanged', async () => {
    const other = api.user();
    const w = await create(other, { name: 'Valid', triggerType: 'webhook', graph: VALID_GRAPH });
    assert.deepEqual(w.graph, VALID_GRAPH);
    const got = await other.call('GET', `/api/v1/workflows/${w.id}`);
    assert.deepEqual(got.body.graph, VALID_GRAPH);
  });

  test('expressions that compile are accepted, with braces, strings and JSON-escaped quotes, and returned unchanged', async () => {
    const other = api.user();
    const graph = {
      nodes: [
        { id: 't', type: 'create_task', params: { title: 'Due {{= $fromMillis($toMillis(now) + 3 * 86400000) }} for {{trigger.name}}' } },
        {
          id: 'h',
          type: 'http_request',
          params: {
            method: 'POST',
            url: 'https://example.com',
            body: '{"order": "{{= {\\"total\\": $sum(trigger.lines.(qty * price)), \\"note\\": \\"}}\\"} }}"}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 't' },
        { from: 't', to: 'h' },
      ],
    };
    const w = await create(other, { name: 'Expressions', triggerType: 'manual', graph });
    assert.deepEqual(w.graph, graph);
  });

  test('a condition with both branches and nodes joining again is accepted (a DAG is not a cycle)', async () => {
    const other = api.user();
    const graph = {
      nodes: [condition('check'), task('yes'), task('no'), http('notify', 'POST')],
      edges: [
        { from: 'trigger', to: 'check' },
        { from: 'check', to: 'yes', branch: 'true' },
        { from: 'check', to: 'no', branch: 'false' },
        { from: 'yes', to: 'notify' },
        { from: 'no', to: 'notify' },
      ],
    };
    const w = await create(other, { name: 'Diamond', triggerType: 'manual', graph });
    assert.deepEqual(w.graph, graph);
  });
});

describe('webhook secret', () => {
  test("a signing secret of the sender's choosing: validated, stored sealed like the generated one, never answered in full", async () => {
    const u = api.user();
    const w = await create(u, { name: 'Clerk', triggerType: 'webhook', triggerConfig: { signature: 'standard-webhooks' } });
    assert.deepEqual(
      (await u.call('GET', `/api/v1/workflows/${w.id}`)).body.webhook,
      { url: urlOf(w.id), requireSecret: false, authentication: 'standard-webhooks' },
      'a signed trigger needs no x-webhook-secret: it says how it is authenticated',
    );
    const own = `whsec_${Buffer.from('clerk-signing-key-24-byte').toString('base64')}`;
    const set = await u.call('PUT', `/api/v1/workflows/${w.id}/webhook-secret`, { secret: own });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body, { workflowId: w.id, url: urlOf(w.id), secretEnding: own.slice(-4) });
    assert.ok(!JSON.stringify(set.body).includes(own.slice(6, 20)), 'not echoed back');
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`)).body.secret, own, 'the reveal (write) shows it');
    const { rows } = (await api.workspace.db.exec(`SELECT webhook_secret_cipher AS c FROM "workspace"."workflow" WHERE id = $1`, [w.id])) as {
      rows: { c: string }[];
    };
    assert.ok(rows[0]!.c.startsWith('v1.') && !rows[0]!.c.includes(own.slice(6)), 'sealed, not plaintext');
    for (const bad of [
      'secret',
      'whsec_',
      'whsec_short',
      `whsec_${'A'.repeat(100)}`,
      `whsec_${Buffer.alloc(24).toString('base64')}!`,
      `whsec_${Buffer.alloc(16).toString('base64')}`,
    ]) {
      const res = await u.call('PUT', `/api/v1/workflows/${w.id}/webhook-secret`, { secret: bad });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, /secret/);
    }
    assert.equal((await u.call('PUT', `/api/v1/workflows/${w.id}/webhook-secret`, { secret: own, extra: 1 })).status, 400);
    const readOnly = signInternalToken(api.keys, { sub: u.id, aud: 'workspace-api', scope: 'mcp:read', azp: 'test' });
    assert.equal((await u.call('PUT', `/api/v1/workflows/${w.id}/webhook-secret`, { secret: own }, { authorization: `Bearer ${readOnly}` })).status, 403);
    const manual = await create(u, { name: 'Manual', triggerType: 'manual' });
    assert.equal((await u.call('PUT', `/api/v1/workflows/${manual.id}/webhook-secret`, { secret: own })).status, 404);
    const other = api.user();
    assert.equal((await other.call('PUT', `/api/v1/workflows/${w.id}/webhook-secret`, { secret: own })).status, 404, "another user's workflow");
  });

  test('GET /webhook-secret returns the secret given at creation, with workflowId and url', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    const res = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { workflowId: w.id, secret: w.webhookSecret, url: urlOf(w.id) });
  });

  test('revealing and regenerating need write scope: a mcp:read token gets 403 forbidden naming mcp:write', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    // The same user, with a read-only token.
    const readOnly = signInternalToken(api.keys, { sub: u.id, aud: 'workspace-api', scope: 'mcp:read', azp: 'test' });
    const asReader = { authorization: `Bearer ${readOnly}` };

    const get = await u.call('GET', `/api/v1/workflows/${w.id}`, undefined, asReader);
    assert.equal(get.status, 200, 'the read token does work for reading the workflow');

    const reveal = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`, undefined, asReader);
    assert.equal(reveal.status, 403);
    assert.equal(reveal.body.error, 'forbidden');
    assert.match(reveal.body.message, /mcp:write/);
    assert.ok(!JSON.stringify(reveal.body).includes(w.webhookSecret!));

    const regen = await u.call('POST', `/api/v1/workflows/${w.id}/webhook-secret/regenerate`, undefined, asReader);
    assert.equal(regen.status, 403);
    assert.equal(regen.body.error, 'forbidden');
    assert.match(regen.body.message, /mcp:write/);

    const after = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(after.body.secret, w.webhookSecret, 'the refused regenerate changed nothing');
  });

  test('regenerate: a new secret, and the reveal shows the new one afterwards', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    const regen = await u.call('POST', `/api/v1/workflows/${w.id}/webhook-secret/regenerate`);
    assert.equal(regen.status, 200, JSON.stringify(regen.body));
    assert.equal(regen.body.workflowId, w.id);
    assert.equal(regen.body.url, urlOf(w.id));
    assert.ok(regen.body.secret.startsWith('whsec_') && regen.body.secret.length >= 40);
    assert.notEqual(regen.body.secret, w.webhookSecret, 'a different secret');

    const reveal = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(reveal.body.secret, regen.body.secret);

    const twice = await u.call('POST', `/api/v1/workflows/${w.id}/webhook-secret/regenerate`);
    assert.notEqual(twice.body.secret, regen.body.secret);
    assert.equal((await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`)).body.secret, twice.body.secret);
  });

  test('a non-webhook workflow: 404 not_found on reveal and on regenerate, and it stays without secret', async () => {
    const u = api.user();
    for (const triggerType of ['manual', 'schedule', 'note', 'entity'] as const) {
      const w = await create(u, { name: triggerType, triggerType });
      const reveal = await u.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
      assert.equal(reveal.status, 404, triggerType);
      assert.equal(reveal.body.error, 'not_found');
      const regen = await u.call('POST', `/api/v1/workflows/${w.id}/webhook-secret/regenerate`);
      assert.equal(regen.status, 404, triggerType);
      assert.equal(regen.body.error, 'not_found');
      const { rows } = await api.workspace.db.exec('SELECT webhook_secret_cipher FROM "workspace"."workflow" WHERE id = $1', [w.id]);
      assert.equal(rows[0]?.webhook_secret_cipher, null, `${triggerType}: regenerate stored no secret`);
    }
  });

  test('an unknown workflow id: 404 on reveal and regenerate', async () => {
    const u = api.user();
    assert.equal((await u.call('GET', `/api/v1/workflows/${randomUUID()}/webhook-secret`)).status, 404);
    assert.equal((await u.call('POST', `/api/v1/workflows/${randomUUID()}/webhook-secret/regenerate`)).status, 404);
  });
});

describe('secret at rest', () => {
  /** Every textual form of the secret a dump could contain. */
  function forms(secret: string): string[] {
    const body = secret.slice('whsec_'.length);
    const raw = Buffer.from(body, 'base64url');
    return [secret, body, raw.toString('base64'), raw.toString('hex')];
  }

  function assertRowHidesSecret(row: Record<string, unknown>, secret: string): void {
    for (const [column, value] of Object.entries(row)) {
      const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
      for (const f of forms(secret)) assert.ok(!text.includes(f), `column ${column} contains the secret (${f.slice(0, 12)}…)`);
    }
  }

  test('a plain SQL dump of workspace.workflow holds only the ciphertext, which the app key opens to the secret', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook', description: 'sealed', triggerConfig: { a: 1 } });
    const secret = w.webhookSecret!;
    const { rows } = await api.workspace.db.exec('SELECT * FROM "workspace"."workflow" WHERE id = $1', [w.id]);
    assert.equal(rows.length, 1, 'the superuser connection sees the row');
    const row = rows[0]!;
    assert.ok('webhook_secret_cipher' in row);
    const cipher = row.webhook_secret_cipher;
    assert.equal(typeof cipher, 'string');
    assert.ok((cipher as string).length > 0, 'webhook_secret_cipher is non-empty');
    assert.match(cipher as string, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assertRowHidesSecret(row, secret);

    // The whole table, all rows, as a dump would have it.
    const all = await api.workspace.db.exec('SELECT * FROM "workspace"."workflow"');
    assert.ok(!JSON.stringify(all.rows).includes(secret.slice('whsec_'.length)), 'no row of the table holds the secret');

    // And it really is the sealed secret (not something unrelated).
    assert.equal(api.app.ctx.secrets.open(cipher as string), secret);
  });

  test('after regenerate the column holds a new ciphertext, and neither secret in clear', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Hook', triggerType: 'webhook' });
    const read = async () => (await api.workspace.db.exec('SELECT * FROM "workspace"."workflow" WHERE id = $1', [w.id])).rows[0]!;
    const before = await read();
    const regen = await u.call('POST', `/api/v1/workflows/${w.id}/webhook-secret/regenerate`);
    assert.equal(regen.status, 200);
    const afterRow = await read();
    assert.notEqual(afterRow.webhook_secret_cipher, before.webhook_secret_cipher);
    assertRowHidesSecret(afterRow, regen.body.secret);
    assertRowHidesSecret(afterRow, w.webhookSecret!);
  });
});

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);

  test('generateSecret: whsec_ + 32 random bytes in base64url, never twice the same', () => {
    const a = SecretBox.generateSecret();
    const b = SecretBox.generateSecret();
    assert.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(a.slice(6), 'base64url').length, 32);
    assert.notEqual(a, b);
  });

  test('seal/open round trip; the sealed form does not contain the plain text and differs each time', () => {
    const secret = SecretBox.generateSecret();
    const sealed = box.seal(secret);
    assert.equal(box.open(sealed), secret);
    assert.ok(!sealed.includes(secret.slice(6)));
    const again = box.seal(secret);
    assert.notEqual(again, sealed, 'a fresh IV each time');
    assert.equal(box.open(again), secret);
    assert.equal(box.open(box.seal('')), '', 'even the empty string');
    assert.equal(box.open(box.seal('ünïcødé ✓')), 'ünïcødé ✓');
  });

  test('tampered ciphertext, tag or iv: open throws', () => {
    const sealed = box.seal(SecretBox.generateSecret());
    const [v, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
    assert.throws(() => box.open([v, iv, tag, flip(ct, 0)].join('.')), 'ciphertext changed');
    assert.throws(() => box.open([v, iv, tag, flip(ct, 10)].join('.')), 'ciphertext changed in the middle');
    assert.throws(() => box.open([v, iv, flip(tag, 0), ct].join('.')), 'tag changed');
    assert.throws(() => box.open([v, flip(iv, 0), tag, ct].join('.')), 'iv changed');
    assert.throws(() => box.open([v, iv, tag, ct.slice(0, -4)].join('.')), 'ciphertext truncated');
    assert.throws(() => box.open(['v2', iv, tag, ct].join('.')), 'unknown version');
    assert.throws(() => box.open('garbage'));
  });

  test('matches: true only for exactly the sealed secret', () => {
    const secret = SecretBox.generateSecret();
    const sealed = box.seal(secret);
    assert.equal(box.matches(sealed, secret), true, 'the right secret');
    assert.equal(box.matches(sealed, SecretBox.generateSecret()), false, 'another secret');
    assert.equal(box.matches(sealed, flip(secret, 20)), false, 'one character flipped');
    assert.equal(box.matches(sealed, flip(secret, secret.length - 1)), false, 'last character flipped');
    assert.equal(box.matches(sealed, secret.slice(0, -1)), false, 'a prefix');
    assert.equal(box.matches(sealed, secret.slice(0, 6)), false, 'just the whsec_ prefix');
    assert.equal(box.matches(sealed, ''), false, 'the empty string');
    assert.equal(box.matches(sealed, `${secret}x`), false, 'the secret with a suffix');
  });

  test('another key cannot open it (nor match against it)', () => {
    const secret = SecretBox.generateSecret();
    const sealed = box.seal(secret);
    const other = new SecretBox(randomBytes(32));
    assert.throws(() => other.open(sealed));
    assert.throws(() => other.matches(sealed, secret));
    assert.equal(new SecretBox(Buffer.from(key)).open(sealed), secret, 'the same key bytes in a new box do');
  });

  test('a key that is not 32 bytes is refused', () => {
    assert.throws(() => new SecretBox(randomBytes(16)), /32 bytes/);
    assert.throws(() => new SecretBox(randomBytes(33)), /32 bytes/);
  });
});

describe('another user’s workflow', () => {
  test('is 404 (never 403) for get, patch, delete, reveal and regenerate, and stays unchanged', async () => {
    const owner = api.user();
    const intruder = api.user();
    const w = await create(owner, { name: 'Private', description: 'mine', triggerType: 'webhook', graph: VALID_GRAPH });
    const before = (await owner.call('GET', `/api/v1/workflows/${w.id}`)).body;

    const attempts: [string, string, unknown][] = [
      ['GET', '/api/v1/workflows/:id', undefined],
      ['PATCH', '/api/v1/workflows/:id', { name: 'hijacked', active: true, triggerType: 'manual' }],
      ['DELETE', '/api/v1/workflows/:id', undefined],
      ['GET', '/api/v1/workflows/:id/webhook-secret', undefined],
      ['POST', '/api/v1/workflows/:id/webhook-secret/regenerate', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const theirs = await intruder.call(method, path.replace(':id', w.id), body);
      const missing = await intruder.call(method, path.replace(':id', randomUUID()), body);
      assert.equal(theirs.status, 404, `${method} ${path}: ${JSON.stringify(theirs.body)}`);
      assert.equal(theirs.body.error, 'not_found');
      assert.deepEqual(theirs.body, missing.body, `${method} ${path}: indistinguishable from an id that does not exist`);
      assert.ok(!JSON.stringify(theirs.body).includes(w.webhookSecret!));
    }

    const afterGet = await owner.call('GET', `/api/v1/workflows/${w.id}`);
    assert.equal(afterGet.status, 200);
    assert.deepEqual(afterGet.body, before, 'the owner’s workflow is unchanged');
    const reveal = await owner.call('GET', `/api/v1/workflows/${w.id}/webhook-secret`);
    assert.equal(reveal.body.secret, w.webhookSecret, 'the secret was not regenerated');
    const list = await intruder.call('GET', '/api/v1/workflows');
    assert.deepEqual(list.body.items, [], 'not in the intruder’s listing');
  });
});

describe('inline secrets in HTTP Request nodes, read without write (docs/credentials.md)', () => {
  const GRAPH: WorkflowGraph = {
    nodes: [
      {
        id: 'push',
        type: 'http_request',
        params: {
          method: 'POST',
          url: 'https://crm-user:hunter2-pass@api.example.test/v1/contacts?api_key=k-123456&page=2',
          headers: {
            Authorization: 'Bearer sk_live_inline_123',
            Cookie: 'sid=abcdef123',
            'X-Api-Key': 'key-inline-456',
            'X-Auth-Token': 'tok-inline-789',
            'X-Webhook-Secret': 'whsec-inline',
            Accept: 'application/json',
            'X-Referenced': 'Bearer {{credentials.crm}}',
          },
          body: '{"contact":"{{trigger.email}}","password":"pw-inline-1","nested":{"clientSecret":"cs-inline-2","note":"kept"},"token":"{{credentials.crm}}"}',
        },
      },
    ],
    edges: [{ from: 'trigger', to: 'push' }],
  };
  const PLAINTEXTS = [
    'hunter2-pass',
    'k-123456',
    'sk_live_inline_123',
    'abcdef123',
    'key-inline-456',
    'tok-inline-789',
    'whsec-inline',
    'pw-inline-1',
    'cs-inline-2',
  ];

  test('GET /workflows/:id and the listing mask them for mcp:read; mcp:write sees the graph as written', async () => {
    const u = api.user();
    const w = await create(u, { name: 'Inline', triggerType: 'webhook', graph: GRAPH });
    const readOnly = signInternalToken(api.keys, { sub: u.id, aud: 'workspace-api', scope: 'mcp:read', azp: 'test' });
    const asReader = { authorization: `Bearer ${readOnly}` };

    const full = await u.call('GET', `/api/v1/workflows/${w.id}`);
    assert.deepEqual(full.body.graph, GRAPH, 'write access: unchanged');

    for (const res of [await u.call('GET', `/api/v1/workflows/${w.id}`, undefined, asReader), await u.call('GET', '/api/v1/workflows', undefined, asReader)]) {
      assert.equal(res.status, 200);
      const text = JSON.stringify(res.body);
      for (const p of PLAINTEXTS) assert.ok(!text.includes(p), `${p} is masked`);
    }
    const masked = (await u.call('GET', `/api/v1/workflows/${w.id}`, undefined, asReader)).body.graph.nodes[0].params;
    assert.equal(masked.url, 'https://crm-user:••••@api.example.test/v1/contacts?api_key=••••&page=2');
    assert.deepEqual(masked.headers, {
      Authorization: 'Bearer ••••',
      Cookie: '••••',
      'X-Api-Key': '••••',
      'X-Auth-Token': '••••',
      'X-Webhook-Secret': '••••',
      Accept: 'application/json',
      'X-Referenced': 'Bearer {{credentials.crm}}',
    });
    assert.deepEqual(JSON.parse(masked.body), {
      contact: '{{trigger.email}}',
      password: '••••',
      nested: { clientSecret: '••••', note: 'kept' },
      token: '{{credentials.crm}}',
    });
  });
});

describe('error workflow', () => {
  test('errorWorkflowId names another workflow of the owner: stored, shown, cleared with null; itself, another user’s or none is 400', async () => {
    const u = api.user();
    const other = api.user();
    const create = async (user: TestUser, body: Record<string, unknown> = {}) =>
      (await user.call('POST', '/api/v1/workflows', { name: 'wf', triggerType: 'manual', ...body })) as { status: number; body: any };
    const handler = await create(u, { triggerType: 'error' });
    assert.equal(handler.status, 201, JSON.stringify(handler.body));
    const main = await create(u, { errorWorkflowId: handler.body.id });
    assert.equal(main.status, 201, JSON.stringify(main.body));
    assert.equal(main.body.errorWorkflowId, handler.body.id);
    assert.equal((await u.call('GET', `/api/v1/workflows/${main.body.id}`)).body.errorWorkflowId, handler.body.id);
    assert.equal(handler.body.errorWorkflowId, null);

    const self = await u.call('PATCH', `/api/v1/workflows/${main.body.id}`, { errorWorkflowId: main.body.id });
    assert.equal(self.status, 400);
    assert.match(self.body.message, /errorWorkflowId must name another workflow/);
    const foreign = await create(other);
    const theirs = await u.call('PATCH', `/api/v1/workflows/${main.body.id}`, { errorWorkflowId: foreign.body.id });
    assert.equal(theirs.status, 400);
    assert.match(theirs.body.message, /errorWorkflowId must name one of your workflows/);
    assert.equal((await create(u, { errorWorkflowId: '00000000-0000-4000-8000-000000000000' })).status, 400);

    const cleared = await u.call('PATCH', `/api/v1/workflows/${main.body.id}`, { errorWorkflowId: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.errorWorkflowId, null);
  });
});

describe('run history retention per workflow', () => {
  test('retention {days?, runs?} is stored, shown, replaced as a whole, cleared with null; out-of-range or unknown fields are 400', async () => {
    const u = api.user();
    const created = (await u.call('POST', '/api/v1/workflows', { name: 'wf', triggerType: 'manual', retention: { days: 7 } })) as { status: number; body: any };
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.retention, { days: 7 });
    const id = created.body.id as string;
    assert.deepEqual((await u.call('GET', `/api/v1/workflows/${id}`)).body.retention, { days: 7 });
    assert.equal((await u.call('POST', '/api/v1/workflows', { name: 'plain', triggerType: 'manual' })).body.retention, null);

    const both = await u.call('PATCH', `/api/v1/workflows/${id}`, { retention: { days: 90, runs: 500 } });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.deepEqual(both.body.retention, { days: 90, runs: 500 });
    const runsOnly = await u.call('PATCH', `/api/v1/workflows/${id}`, { retention: { runs: 20 } });
    assert.deepEqual(runsOnly.body.retention, { runs: 20 }, 'the whole object replaces the previous one');
    const renamed = await u.call('PATCH', `/api/v1/workflows/${id}`, { name: 'renamed' });
    assert.deepEqual(renamed.body.retention, { runs: 20 }, 'a PATCH without retention leaves it');

    for (const retention of [{ days: 0 }, { days: 3651 }, { runs: 0 }, { runs: 1_000_001 }, { days: 1.5 }, { days: '7' }, { weeks: 2 }, 'forever']) {
      const bad = await u.call('PATCH', `/api/v1/workflows/${id}`, { retention });
      assert.equal(bad.status, 400, JSON.stringify(retention));
      assert.equal(bad.body.error, 'validation_failed', JSON.stringify(bad.body));
      assert.match(bad.body.message, /retention/, JSON.stringify(bad.body));
    }
    assert.deepEqual((await u.call('GET', `/api/v1/workflows/${id}`)).body.retention, { runs: 20 }, 'a refused PATCH changes nothing');

    const cleared = await u.call('PATCH', `/api/v1/workflows/${id}`, { retention: null });
    assert.equal(cleared.body.retention, null);
    const emptied = await u.call('PATCH', `/api/v1/workflows/${id}`, { retention: {} });
    assert.equal(emptied.body.retention, null, '{} is the global setting too');
  });
});

describe('tags and the list’s orders', () => {
  test('tags are set on create and update (no new version), filtered by tag, matched by q; bad tags are refused by field', async () => {
    const u = api.user();
    const a = await create(u, { name: 'Alpha', triggerType: 'manual', tags: ['billing', 'eu'] });
    const b = await create(u, { name: 'Beta', triggerType: 'manual' });
    assert.deepEqual(a.tags, ['billing', 'eu']);
    assert.deepEqual(b.tags, []);
    const tagged = await u.call('PATCH', `/api/v1/workflows/${b.id}`, { tags: ['billing'] });
    assert.equal(tagged.status, 200, JSON.stringify(tagged.body));
    assert.deepEqual(tagged.body.tags, ['billing']);
    const versions = await u.call('GET', `/api/v1/workflows/${b.id}/versions`);
    assert.equal(versions.body.items.length, 1, 'tags are not part of the definition: no version');
    const names = async (query: string) => ((await u.call('GET', `/api/v1/workflows${query}`)).body.items as { name: string }[]).map((w) => w.name).sort();
    assert.deepEqual(await names('?tag=billing'), ['Alpha', 'Beta']);
    assert.deepEqual(await names('?tag=eu'), ['Alpha']);
    assert.deepEqual(await names('?tag=EU'), [], 'a tag is matched exactly');
    assert.deepEqual(await names('?q=eu'), ['Alpha'], 'q matches a tag too');
    assert.deepEqual(await names('?tag=none'), []);
    // Another user's tags are not seen.
    assert.deepEqual(((await api.user().call('GET', '/api/v1/workflows?tag=billing')).body.items as unknown[]).length, 0);
    for (const bad of [['with space'], ['a,b'], Array.from({ length: 21 }, (_, i) => `t${i}`), ['x'.repeat(51)]]) {
      const res = await u.call('PATCH', `/api/v1/workflows/${a.id}`, { tags: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.match(res.body.message, /body\.tags/);
    }
  });

  test('sort=updated and sort=name page by keyset: every workflow once, in order, while one is changed between pages; a cursor of another order is refused', async () => {
    const u = api.user();
    const names = ['delta', 'Alpha', 'charlie', 'bravo', 'echo', 'foxtrot', 'golf'];
    const made: { id: string; name: string }[] = [];
    for (const name of names) made.push({ id: (await create(u, { name, triggerType: 'manual' })).id, name });
    // Touch them in an order of their own, so update order differs from creation and name order.
    for (const w of [made[3]!, made[0]!, made[6]!, made[1]!, made[5]!, made[2]!, made[4]!]) {
      const res = await u.call('PATCH', `/api/v1/workflows/${w.id}`, { description: `touched ${w.name}` });
      assert.equal(res.status, 200);
    }
    const byName = await allPages(u, '/api/v1/workflows?sort=name', 3);
    const namesInOrder = byName.pages.flat().map((w) => w.name);
    assert.equal(byName.pages.length, 3);
    assert.deepEqual([...namesInOrder].sort(), [...names].sort(), 'each once');
    for (let i = 1; i < namesInOrder.length; i++) assert.ok(namesInOrder[i - 1]! <= namesInOrder[i]!, `name order: ${namesInOrder.join(', ')}`);

    const first = await u.call('GET', '/api/v1/workflows?sort=updated&limit=3');
    assert.deepEqual(
      (first.body.items as { name: string }[]).map((w) => w.name),
      ['echo', 'charlie', 'foxtrot'],
      'last changed first',
    );
    // A workflow of a later page changes: it moves to the front, and the next pages neither repeat nor skip the others.
    await u.call('PATCH', `/api/v1/workflows/${made[0]!.id}`, { description: 'changed again' });
    const rest: string[] = [];
    for (let cursor: string | null = first.body.nextCursor; cursor;) {
      const page = await u.call('GET', `/api/v1/workflows?sort=updated&limit=3&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      rest.push(...(page.body.items as { name: string }[]).map((w) => w.name));
      cursor = page.body.nextCursor;
    }
    assert.deepEqual(rest, ['Alpha', 'golf', 'bravo'], 'delta moved ahead of the pages already read; the rest once each, in order');

    const wrong = await u.call('GET', `/api/v1/workflows?sort=name&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.message, /another listing/);
    const created = await u.call('GET', `/api/v1/workflows?cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.equal(created.status, 400);
    const unknown = await u.call('GET', '/api/v1/workflows?sort=lastRun');
    assert.equal(unknown.status, 400);
  });
});

test('a disabled step is saved and answered as such; a disabled Verify signature step is refused, naming it (it authenticates the deliveries)', async () => {
  const u = api.user();
  const w = await create(u, {
    name: 'With a disabled step',
    triggerType: 'manual',
    graph: { nodes: [{ id: 'later', type: 'create_task', disabled: true, params: { title: 'x' } }], edges: [{ from: 'trigger', to: 'later' }] },
  });
  assert.equal(w.graph.nodes[0].disabled, true);
  const refused = await u.call('POST', '/api/v1/workflows', {
    name: 'Unguarded',
    triggerType: 'webhook',
    graph: {
      nodes: [
        { id: 'verify', type: 'verify_signature', disabled: true, params: { preset: 'github', credential: 'gh' } },
        { id: 'task', type: 'create_task', params: { title: 'x' } },
      ],
      edges: [
        { from: 'trigger', to: 'verify' },
        { from: 'verify', to: 'task', branch: 'true' },
      ],
    },
  });
  assert.equal(refused.status, 400);
  assert.match(refused.body.message, /node "verify" is a Verify signature step, which cannot be disabled/);
});
