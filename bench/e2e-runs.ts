// Webhook to recorded run: N deliveries to one active workflow (condition → create task) through
// webhook-ingest, the embedded bus, the workflow engine and workspace-api; prints completed runs per
// second from the first accept to the last run recorded.
//   npm run bench:e2e [N=500]        (DATABASE_URL=postgres://... for Postgres; default PGlite)
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createEmbeddedBus } from '@flowdesk/bus';
import { createTestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest, workspaceApiDirectory } from '@flowdesk/webhook-ingest';
import { buildApp as buildEngine, createGuardedHttpClient, workspaceClient } from '@flowdesk/workflow-engine';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';

const N = Number(process.argv[2] ?? 500);
const keys = generateSigningKeys();
const owner = randomUUID();
// One token per caller for the whole run, as the services' token sources cache theirs (service-kit
// userTokenSource / serviceTokenSource): signing a fresh one per call cost ~10% of this process's CPU.
const tokens = new Map<string, string>();
const token = (sub: string, azp: string, scope = 'mcp:read mcp:write') => {
  const id = `${sub} ${azp} ${scope}`;
  let t = tokens.get(id);
  if (!t) tokens.set(id, (t = signInternalToken(keys, { sub, aud: 'workspace-api', scope, azp }, { ttlSeconds: 3600 })));
  return t;
};

const db = await createTestDatabase();
await migrateWorkspace(db.db);
const bus = await createEmbeddedBus(db.db, { pollIntervalMs: 20 });
const api = await buildWorkspaceApi({ db: db.db, jwtPublicKeyPem: keys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl: 'http://bench', logLevel: 'silent' });
const apiUrl = await listen(api, 0);
const ingest = await buildWebhookIngest({
  bus,
  directory: workspaceApiDirectory({ workspaceApiUrl: apiUrl, token: async () => token('svc:webhook-ingest', 'webhook-ingest', 'internal') }),
  rateLimit: { perSecond: 1e9, burst: 1e9 },
  logLevel: 'silent',
});
const ingestUrl = await listen(ingest, 0);
const http = createGuardedHttpClient();
const engine = await buildEngine({ bus, http, workspace: workspaceClient({ workspaceApiUrl: apiUrl, userToken: async (sub) => token(sub, 'workflow-engine') }), concurrency: 16, logLevel: 'silent' });
await listen(engine, 0);

const asOwner = async (method: string, path: string, body?: unknown) =>
  (await (await fetch(`${apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token(owner, 'bench')}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })).json()) as any;
const wf = await asOwner('POST', '/api/v1/workflows', {
  name: 'bench',
  triggerType: 'webhook',
  active: true,
  graph: {
    nodes: [
      { id: 'c', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } },
      { id: 't', type: 'create_task', params: { title: 'order {{trigger.n}}' } },
    ],
    edges: [{ from: 'trigger', to: 'c' }, { from: 'c', to: 't', branch: 'true' }],
  },
});

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < N) {
      const n = next++;
      const res = await fetch(`${ingestUrl}/functions/v1/webhook-trigger/${wf.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret }, body: JSON.stringify({ n }) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`delivery ${n}: ${res.status}`);
    }
  }),
);
const acceptedAt = performance.now();
for (;;) {
  const overview = await asOwner('GET', '/api/v1/overview');
  if (overview.workflows.runsLast24h >= N) {
    const runs = await asOwner('GET', `/api/v1/workflow-runs?status=succeeded&limit=1`);
    if (runs.items.length) break;
  }
  await new Promise((r) => setTimeout(r, 100));
}
// runsLast24h counts runs that were claimed; wait until all of them have finished.
for (;;) {
  const tasks = await asOwner('GET', '/api/v1/overview');
  if (tasks.tasks.open >= N) break;
  await new Promise((r) => setTimeout(r, 100));
}
const done = performance.now();
console.log(`e2e on ${db.db.kind}: ${N} webhooks accepted in ${((acceptedAt - started) / 1000).toFixed(1)} s; ${N} runs recorded in ${((done - started) / 1000).toFixed(1)} s`);
console.log(`${(N / ((done - started) / 1000)).toFixed(0)} completed runs/s (first accept to last run)`);
await engine.close();
await ingest.close();
await bus.close();
await http.close();
await api.close();
await db.close();
