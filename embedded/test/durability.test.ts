// A 200 never loses an event: 1,000 webhooks accepted while the workflow engine is stopped all run
// once it starts again — exactly 1,000 runs, none lost, none doubled. Real workspace-api,
// webhook-ingest, workflow-engine and embedded bus on one database (PGlite, or Postgres with
// DATABASE_URL); internal tokens are signed with test keys instead of asking the auth service.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type Service } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest, workspaceApiDirectory } from '@flowdesk/webhook-ingest';
import {
  buildApp as buildEngine,
  createGuardedHttpClient,
  migrateEngine,
  workspaceClient,
  type GuardedHttpClient,
  type WorkspaceClient,
} from '@flowdesk/workflow-engine';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';

const N = 1_000;
const keys = generateSigningKeys();
const owner = randomUUID();
const userToken = async (sub: string) => signInternalToken(keys, { sub, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'workflow-engine' });
let db: TestDatabase;
let bus: EventBus;
let api: Service;
let apiUrl: string;
let ingest: Service;
let ingestUrl: string;
let http: GuardedHttpClient;
let engine: Service | undefined;
let workspace: WorkspaceClient;

async function asOwner(method: string, path: string, body?: unknown) {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${signInternalToken(keys, { sub: owner, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'test' })}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as any;
}

/** The engine's own table (the runs API is down while the engine is stopped). */
async function countRuns(workflowId: string): Promise<{ finished: number; all: number }> {
  const { rows } = await db.db.exec(
    `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS finished, count(*)::int AS "all" FROM "engine"."run" WHERE workflow_id = $1`,
    [workflowId],
  );
  return { finished: Number(rows[0]?.finished), all: Number(rows[0]?.all) };
}

before(async () => {
  db = await createTestDatabase();
  await migrateWorkspace(db.db);
  await migrateEngine(db.db);
  bus = await createEmbeddedBus(db.db, { pollIntervalMs: 25 });
  api = await buildWorkspaceApi({
    db: db.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: 'http://flowdesk.test',
    logLevel: 'silent',
    events: bus,
  });
  apiUrl = await listen(api, 0);
  const serviceToken = async () => signInternalToken(keys, { sub: 'svc:webhook-ingest', aud: 'workspace-api', scope: 'internal', azp: 'webhook-ingest' });
  ingest = await buildWebhookIngest({
    bus,
    directory: workspaceApiDirectory({ workspaceApiUrl: apiUrl, token: serviceToken }),
    rateLimit: { perSecond: 10_000, burst: 10_000 },
    logLevel: 'silent',
  });
  ingestUrl = await listen(ingest, 0);
  http = createGuardedHttpClient();
  workspace = workspaceClient({
    workspaceApiUrl: apiUrl,
    userToken,
    serviceToken: async () => signInternalToken(keys, { sub: 'svc:workflow-engine', aud: 'workspace-api', scope: 'internal', azp: 'workflow-engine' }),
  });
});

after(async () => {
  await engine?.close();
  await ingest.close();
  await bus.close();
  await http.close();
  await workspace.close();
  await api.close();
  await db.close();
});

test(`${N} webhooks accepted while the engine is stopped → exactly ${N} runs once it starts`, { timeout: 240_000 }, async () => {
  const wf = await asOwner('POST', '/api/v1/workflows', {
    name: 'Orders',
    triggerType: 'webhook',
    active: true,
    requireWebhookSecret: true,
    graph: { nodes: [{ id: 'check', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } }], edges: [{ from: 'trigger', to: 'check' }] },
  });
  const secret: string = wf.webhookSecret;

  // The engine is not running: every delivery is acknowledged once stored, nothing runs yet.
  let accepted = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < N) {
        const n = next++;
        const res = await fetch(`${ingestUrl}/functions/v1/webhook-trigger/${wf.id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-secret': secret },
          body: JSON.stringify({ n }),
        });
        await res.arrayBuffer();
        if (res.status === 200) accepted++;
      }
    }),
  );
  assert.equal(accepted, N, 'every delivery was acknowledged');
  assert.deepEqual(await countRuns(wf.id), { finished: 0, all: 0 });

  engine = await buildEngine({ bus, db: db.db, jwtPublicKeyPem: keys.publicKeyPem, http, workspace, concurrency: 8, logLevel: 'silent' });
  await listen(engine, 0);
  const deadline = Date.now() + 200_000;
  let counts = await countRuns(wf.id);
  while (counts.finished < N && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    counts = await countRuns(wf.id);
  }
  assert.deepEqual(counts, { finished: N, all: N }, 'one run per accepted webhook, none lost, none doubled');
});
