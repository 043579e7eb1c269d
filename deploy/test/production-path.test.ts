// End to end on the production path: each of the six services its own process from dist/main.js,
// production configuration, migrations by the migrate entrypoints. The same test body runs on
//  - the machine's Postgres + the embedded bus on it (always),
//  - the machine's Postgres + a real one-node Kafka broker from tools/kafka (the machine's Java; gated
//    as kafka-failure.test.ts: the pass with DATABASE_URL, skipped with the reason where Java or the
//    broker's jars are missing, a failure under CI=true), and
//  - Postgres + Kafka in testcontainers (skipped, with the reason, where no Docker engine answers).
// Webhook path: webhook-ingest → bus → workflow-engine → (HTTP Request to a loopback receiver,
// Create Task) → workspace-api. MCP path: SDK client → mcp-gateway → auth introspection/exchange →
// workspace-api.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mcpListTasks, webhookToTask } from './support/scenarios.ts';
import { dockerAnswers, NO_DOCKER, startPostgresAndKafka } from './support/docker.ts';
import { startKafkaWithTopics, whenKafka } from './support/kafka.ts';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { Audience, WORKFLOW_CHANGED_TOPIC } from '@flowdesk/contracts';
import { createFirstUser, createWebhookWorkflow, deliverTo, exchangeForWorkspaceToken, startReceiver, workspaceApi } from './support/flowdesk.ts';
import { freePort, startService } from './support/processes.ts';
import { freshDatabase, SERVICES, startStack, type Stack } from './support/stack.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until it returns `want` or `timeoutMs` passes; returns the last value. */
async function waitFor<T>(read: () => Promise<T>, want: T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (last !== want && Date.now() < deadline) {
    await sleep(250);
    last = await read();
  }
  return last;
}

/** The consumer groups following workflow.changed whose id starts with `prefix` (Kafka: the brokers'; embedded: bus.subscription). */
async function definitionGroups(infra: Infrastructure, prefix: string): Promise<string[]> {
  if (infra.kafkaBrokers) {
    const admin = new Kafka({ brokers: infra.kafkaBrokers.split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      return (await admin.listGroups()).groups
        .map((g) => g.groupId)
        .filter((g) => g.startsWith(prefix))
        .sort();
    } finally {
      await admin.disconnect();
    }
  }
  const sql = new pg.Client({ connectionString: infra.databaseUrl });
  await sql.connect();
  try {
    const { rows } = await sql.query<{ group_id: string }>('SELECT group_id FROM bus.subscription WHERE topic = $1 AND starts_with(group_id, $2) ORDER BY 1', [
      WORKFLOW_CHANGED_TOPIC,
      prefix,
    ]);
    return rows.map((r) => r.group_id);
  } finally {
    await sql.end();
  }
}

interface Infrastructure {
  databaseUrl: string;
  kafkaBrokers?: string;
  close(): Promise<void>;
}

function productionPath(variant: string, infrastructure: () => Promise<Infrastructure>, timeoutMs: number) {
  describe(`production path: ${variant}`, { timeout: timeoutMs }, () => {
    let infra: Infrastructure | undefined;
    let stack: Stack | undefined;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let apiKey: string;

    before(async () => {
      receiver = await startReceiver();
      infra = await infrastructure();
      // The engine's SSRF guard refuses loopback; the allowlist opens exactly the receiver.
      stack = await startStack({ databaseUrl: infra.databaseUrl, kafkaBrokers: infra.kafkaBrokers, ssrfAllowlist: receiver.hostPort });
      ({ apiKey } = await createFirstUser(infra.databaseUrl));
    });

    after(async () => {
      await stack?.close();
      await receiver?.close();
      await infra?.close();
    });

    test('one process per service, all ready', async () => {
      for (const s of SERVICES) assert.equal((await fetch(`${stack!.url(s)}/readyz`)).status, 200, s);
      assert.equal(new Set(SERVICES.map((s) => stack!.proc(s).child.pid)).size, SERVICES.length);
    });

    test('webhook → HTTP Request to a loopback server → Create Task with {{trigger.customer.name}}; the run is recorded', async () => {
      await webhookToTask(stack!, apiKey, receiver);
    });

    test('two engines and two webhook-ingests on one host: a definition change reaches every process; a stopped one leaves no consumer group behind', async () => {
      const api = await workspaceApi(stack!, apiKey);
      const groupsBefore = {
        engine: await definitionGroups(infra!, 'workflow-engine.definitions.'),
        ingest: await definitionGroups(infra!, 'webhook-ingest.definitions.'),
      };
      assert.equal(groupsBefore.engine.length, 1, `one group per running engine: ${groupsBefore.engine.join(', ')}`);
      assert.equal(groupsBefore.ingest.length, 1, `one group per running ingest: ${groupsBefore.ingest.join(', ')}`);
      // Same host, same configuration: what a second replica (or a restart overlapping the old one) is.
      const [engine2, ingest2] = await Promise.all([
        freePort().then((port) => startService('workflow-engine', port, stack!.envOf('workflow-engine'))),
        freePort().then((port) => startService('webhook-ingest', port, stack!.envOf('webhook-ingest'))),
      ]);
      try {
        const both = async () =>
          (await definitionGroups(infra!, 'workflow-engine.definitions.')).length + (await definitionGroups(infra!, 'webhook-ingest.definitions.')).length;
        assert.equal(await waitFor(both, 4, 30_000), 4, 'each new process follows workflow.changed in a group of its own');
        const engineToken = await exchangeForWorkspaceToken(stack!, apiKey, Audience.workflowEngine);
        const wf = await createWebhookWorkflow(api, 'Seen by every replica', { nodes: [], edges: [] });
        const engines = [stack!.url('workflow-engine'), engine2.url];
        const ingests = [stack!.url('webhook-ingest'), ingest2.url];
        // The engines answer a workflow's runs from their definition cache (404: no such workflow).
        const runsStatus = async (engine: string) => {
          const res = await fetch(`${engine}/api/v1/workflows/${wf.id}/runs`, { headers: { authorization: `Bearer ${engineToken}` } });
          await res.arrayBuffer();
          return res.status;
        };
        const deliveryStatus = async (ingest: string) => (await deliverTo(ingest, wf.id, wf.secret, { n: 1 })).status;
        // Every process has the workflow cached now (from its event, or read on the miss).
        for (const e of engines) assert.equal(await waitFor(() => runsStatus(e), 200, 30_000), 200, `engine ${e} knows the workflow`);
        for (const i of ingests) assert.equal(await waitFor(() => deliveryStatus(i), 200, 30_000), 200, `ingest ${i} accepts its deliveries`);

        assert.equal((await api('DELETE', `/api/v1/workflows/${wf.id}`)).status, 204);
        // Only the workflow.changed event tells a process: an engine keeps a cached definition until
        // an event replaces it, an ingest its cached trigger for 60 s. With a group shared by the
        // processes of a host each event reached one of them only.
        for (const e of engines) assert.equal(await waitFor(() => runsStatus(e), 404, 30_000), 404, `engine ${e} saw the deletion`);
        for (const i of ingests) assert.equal(await waitFor(() => deliveryStatus(i), 404, 30_000), 404, `ingest ${i} saw the deletion`);
      } finally {
        await Promise.all([engine2.stop('SIGTERM'), ingest2.stop('SIGTERM')]);
      }
      // A process that stopped deleted its own group (ephemeral); the first ones' are still there.
      assert.deepEqual(await definitionGroups(infra!, 'workflow-engine.definitions.'), groupsBefore.engine);
      assert.deepEqual(await definitionGroups(infra!, 'webhook-ingest.definitions.'), groupsBefore.ingest);
    });

    test('MCP through the gateway process with the SDK client: initialize, then tools/call', async () => {
      await mcpListTasks(stack!, apiKey);
    });
  });
}

productionPath(
  'machine Postgres + embedded bus',
  async () => {
    const db = await freshDatabase();
    return { databaseUrl: db.url, close: () => db.close() };
  },
  360_000,
);

whenKafka('production path: machine Postgres + local Kafka broker', () => {
  productionPath(
    'machine Postgres + local Kafka broker',
    async () => {
      // One broker is enough here (failover is kafka-failure.test.ts's): topics replicated once.
      const [kafka, db] = await Promise.all([startKafkaWithTopics(1, 3), freshDatabase()]);
      return {
        databaseUrl: db.url,
        kafkaBrokers: kafka.brokers.join(','),
        async close() {
          await Promise.allSettled([kafka.stop(), db.close()]);
        },
      };
    },
    420_000,
  );
});

if (await dockerAnswers()) {
  productionPath('Postgres + Kafka (testcontainers)', startPostgresAndKafka, 600_000);
} else {
  test('production path: Postgres + Kafka (testcontainers)', { skip: NO_DOCKER }, () => {});
}
