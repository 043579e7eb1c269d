// The scenarios of the production path, shared by the runs of the six services as processes
// (production-path.test.ts) and as containers (containers.test.ts): each asserts what a user sees.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createKeyViaApi, createWebhookWorkflow, deliver, waitForRuns, workspaceApi, type startReceiver } from './flowdesk.ts';
import type { Stack } from './stack.ts';

/**
 * Webhook → HTTP Request to a loopback server → Create Task with {{trigger.customer.name}}: a wrong
 * secret is refused, the right one accepted, one run recorded, the receiver called, the task there.
 */
export async function webhookToTask(stack: Stack, apiKey: string, receiver: Awaited<ReturnType<typeof startReceiver>>): Promise<void> {
  const api = await workspaceApi(stack, apiKey);
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

  const wrong = await deliver(stack, wf.id, `${wf.secret}x`, { customer: { name: 'Eve' } });
  assert.equal(wrong.status, 401, 'a wrong secret is refused');
  const ok = await deliver(stack, wf.id, wf.secret, { customer: { name: 'Ada' } });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.accepted, true);

  const runs = await waitForRuns(api, [wf.id], (done) => done.length >= 1, 60_000);
  assert.equal(runs.length, 1, `one run: ${JSON.stringify(runs)}`);
  const [run] = runs;
  assert.equal(run!.status, 'succeeded', JSON.stringify(run));
  assert.equal(run!.eventId, ok.body.eventId, 'the run is the accepted delivery’s');
  assert.deepEqual(
    run!.steps.map((s) => s.nodeId),
    ['notify', 'task'],
  );
  assert.deepEqual(receiver.received, [{ path: '/crm', body: { name: 'Ada' } }]);
  const tasks = await api<{ items: { title: string; notes: string }[] }>('GET', '/api/v1/tasks?q=Welcome');
  assert.deepEqual(
    tasks.body.items.map((t) => [t.title, t.notes]),
    [['Welcome Ada', 'ticket T-1']],
  );
}

/** MCP through the gateway with the SDK client and a read key made through auth's key API: initialize, then tools/call. */
export async function mcpListTasks(stack: Stack, apiKey: string): Promise<void> {
  // A read key made through auth's key API, as `npx flowdesk keys create --scope read` would.
  const readKey = await createKeyViaApi(stack, apiKey, 'mcp client', 'read');
  const client = new Client({ name: 'production-path-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url('mcp-gateway')}/functions/v1/mcp-server-v2`), {
    requestInit: { headers: { authorization: `Bearer ${readKey}` } },
  });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, 'flowdesk');
    const result = await client.callTool({ name: 'list_tasks', arguments: { q: 'Welcome' } });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    const items = (result.structuredContent as { items?: { title: string }[] } | undefined)?.items;
    assert.deepEqual(
      items?.map((t) => t.title),
      ['Welcome Ada'],
      JSON.stringify(result),
    );
  } finally {
    await client.close();
  }
}
