// End to end on the production path: each of the five services its own process from dist/main.js,
// production configuration, migrations by the migrate entrypoints. The same test body runs on
//  - the machine's Postgres + the embedded bus on it (always), and
//  - Postgres + Kafka in testcontainers (skipped, with the reason, where no Docker engine answers).
// Webhook path: webhook-ingest → bus → workflow-engine → (HTTP Request to a loopback receiver,
// Create Task) → workspace-api. MCP path: SDK client → mcp-gateway → auth introspection/exchange →
// workspace-api.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dockerAnswers, NO_DOCKER, startPostgresAndKafka } from './support/docker.ts';
import { createFirstUser, createKeyViaApi, createWebhookWorkflow, deliver, startReceiver, waitForRuns, workspaceApi } from './support/flowdesk.ts';
import { freshDatabase, SERVICES, startStack, type Stack } from './support/stack.ts';

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

    test('five processes, one per service, all ready', async () => {
      for (const s of SERVICES) assert.equal((await fetch(`${stack!.url(s)}/readyz`)).status, 200, s);
      assert.equal(new Set(SERVICES.map((s) => stack!.proc(s).child.pid)).size, 5);
    });

    test('webhook → HTTP Request to a loopback server → Create Task with {{trigger.customer.name}}; the run is recorded', async () => {
      const api = await workspaceApi(stack!, apiKey);
      const wf = await createWebhookWorkflow(api, 'New customer', {
        nodes: [
          { id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiver.url}/crm`, body: { name: '{{trigger.customer.name}}' } } },
          { id: 'task', type: 'create_task', params: { title: 'Welcome {{trigger.customer.name}}', notes: 'ticket {{nodes.notify.body.ticket}}' } },
        ],
        edges: [
          { from: 'trigger', to: 'notify' },
          { from: 'notify', to: 'task' },
        ],
      });

      const wrong = await deliver(stack!, wf.id, `${wf.secret}x`, { customer: { name: 'Eve' } });
      assert.equal(wrong.status, 401, 'a wrong secret is refused');
      const ok = await deliver(stack!, wf.id, wf.secret, { customer: { name: 'Ada' } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.accepted, true);

      const runs = await waitForRuns(api, [wf.id], (done) => done.length >= 1, 60_000);
      assert.equal(runs.length, 1, `one run: ${JSON.stringify(runs)}`);
      const [run] = runs;
      assert.equal(run!.status, 'succeeded', JSON.stringify(run));
      assert.equal(run!.eventId, ok.body.eventId, 'the run is the accepted delivery’s');
      assert.deepEqual(run!.steps.map((s) => s.nodeId), ['notify', 'task']);
      assert.deepEqual(receiver.received, [{ path: '/crm', body: { name: 'Ada' } }]);
      const tasks = await api<{ items: { title: string; notes: string }[] }>('GET', '/api/v1/tasks?q=Welcome');
      assert.deepEqual(tasks.body.items.map((t) => [t.title, t.notes]), [['Welcome Ada', 'ticket T-1']]);
    });

    test('MCP through the gateway process with the SDK client: initialize, then tools/call', async () => {
      // A read key made through auth's key API, as `npx flowdesk keys create --scope read` would.
      const readKey = await createKeyViaApi(stack!, apiKey, 'mcp client', 'read');
      const client = new Client({ name: 'production-path-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${stack!.url('mcp-gateway')}/functions/v1/mcp-server-v2`), {
        requestInit: { headers: { authorization: `Bearer ${readKey}` } },
      });
      await client.connect(transport);
      try {
        assert.equal(client.getServerVersion()?.name, 'flowdesk');
        const result = await client.callTool({ name: 'list_tasks', arguments: { q: 'Welcome' } });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        const items = (result.structuredContent as { items?: { title: string }[] } | undefined)?.items;
        assert.deepEqual(items?.map((t) => t.title), ['Welcome Ada'], JSON.stringify(result));
      } finally {
        await client.close();
      }
    });
  });
}

productionPath(
  'machine Postgres + embedded bus',
  async () => {
    const db = await freshDatabase();
    return { databaseUrl: db.url, close: () => db.close() };
  },
  120_000,
);

if (await dockerAnswers()) {
  productionPath('Postgres + Kafka (testcontainers)', startPostgresAndKafka, 600_000);
} else {
  test('production path: Postgres + Kafka (testcontainers)', { skip: NO_DOCKER }, () => {});
}
