// One process with workspace-api, webhook-ingest, the workflow engine and the embedded bus on one
// database (or Kafka, STACK_KAFKA_BROKERS), for tests that kill it with SIGKILL
// (concurrent-durability.test.ts, durable-steps.test.ts). Started with fork(); configured by
// environment; answers over IPC:
//   ready  → { ready: true, apiUrl, ingestUrl, engineUrl }
//   { q: 'runs' } → { runs: [{ eventId, status }] } (every run of the engine's table)
//   { q: 'tasks' } → { tasks: [{ title, n }] } (every task title with its number of tasks)
import { createEmbeddedBus, createKafkaBus, ensureKafkaTopics, type EventBus } from '@flowdesk/bus';
import { CREDENTIAL_REVOKED_TOPIC, ENTITY_CHANGED_TOPIC, TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC } from '@flowdesk/contracts';
import { openDatabase, type DatabaseConfig } from '@flowdesk/db';
import { listen, signInternalToken, type SigningKeys } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest, workspaceApiDirectory } from '@flowdesk/webhook-ingest';
import { buildApp as buildEngine, createGuardedHttpClient, migrateEngine, SsrfPolicy, workspaceClient } from '@flowdesk/workflow-engine';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';

const env = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`stack-process: ${name} is required`);
  return v;
};
const keys = JSON.parse(env('STACK_KEYS')) as SigningKeys;
const db = await openDatabase(JSON.parse(env('STACK_DB')) as DatabaseConfig);
await migrateWorkspace(db);
await migrateEngine(db);
// Embedded: a short lease, so deliveries a killed engine held are handed out again after 2 s, not 30.
// Kafka (STACK_KAFKA_BROKERS, comma-separated): topics created if missing (as embedded/src/start.ts
// does), and a 6 s session (the broker's minimum), so a killed process's partitions move to the new
// one soon; what it had not committed is delivered again.
const kafkaBrokers = (process.env.STACK_KAFKA_BROKERS ?? '').split(',').filter(Boolean);
let bus: EventBus;
if (kafkaBrokers.length > 0) {
  await ensureKafkaTopics(
    { brokers: kafkaBrokers, clientId: 'stack-process' },
    [TRIGGER_TOPIC, CREDENTIAL_REVOKED_TOPIC, WORKFLOW_CHANGED_TOPIC, ENTITY_CHANGED_TOPIC].map((topic) => ({ topic, numPartitions: 4, replicationFactor: 1 })),
  );
  bus = await createKafkaBus({ brokers: kafkaBrokers, clientId: 'stack-process', sessionTimeoutMs: 6_000 });
} else {
  bus = await createEmbeddedBus(db, { pollIntervalMs: 25, leaseMs: 2_000 });
}
const api = await buildWorkspaceApi({
  db,
  jwtPublicKeyPem: keys.publicKeyPem,
  webhookSecretKey: Buffer.from(env('STACK_SECRET_KEY'), 'base64'),
  publicBaseUrl: 'http://flowdesk.test',
  logLevel: 'silent',
  events: bus,
  outboxPollMs: 100,
});
const apiUrl = await listen(api, 0);
const token = (sub: string, azp: string, scope: string) => signInternalToken(keys, { sub, aud: 'workspace-api', scope, azp });
const ingest = await buildWebhookIngest({
  bus,
  directory: workspaceApiDirectory({ workspaceApiUrl: apiUrl, token: async () => token('svc:webhook-ingest', 'webhook-ingest', 'internal') }),
  rateLimit: { perSecond: 1e6, burst: 1e6 },
  // As in production: triggers cached until a workflow.changed event evicts them.
  definitionEvents: { groupId: 'webhook-ingest.definitions.test' },
  logLevel: 'silent',
});
const ingestUrl = await listen(ingest, 0);
const workspace = workspaceClient({
  workspaceApiUrl: apiUrl,
  userToken: async (sub) => token(sub, 'workflow-engine', 'mcp:read mcp:write'),
  serviceToken: async () => token('svc:workflow-engine', 'workflow-engine', 'internal'),
});
const engine = await buildEngine({
  bus,
  db,
  jwtPublicKeyPem: keys.publicKeyPem,
  http: createGuardedHttpClient({ policy: SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: process.env.STACK_SSRF_ALLOWLIST ?? '' }) }),
  workspace,
  concurrency: 128,
  workflowConcurrency: 64,
  logLevel: 'silent',
});
const engineUrl = await listen(engine, 0);

process.on('message', async (m: { q?: string }) => {
  if (m.q === 'runs') {
    const { rows } = await db.exec(`SELECT event_id AS "eventId", status FROM "engine"."run"`);
    process.send!({ runs: rows });
  }
  if (m.q === 'tasks') {
    const { rows } = await db.exec(`SELECT title, count(*)::int AS n FROM "workspace"."task" GROUP BY title`);
    process.send!({ tasks: rows });
  }
});
process.send!({ ready: true, apiUrl, ingestUrl, engineUrl });
