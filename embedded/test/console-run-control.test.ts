// Run control in Debian's chromium on a fresh embedded start (docs/workflow-engine.md, "Run control";
// docs/operations.md, "Run history retention"): a run in flight — its HTTP step waits on a loopback
// server this test answers — is cancelled from its run page and shown Cancelled; answering the held
// request afterwards does not start its next step (no task). A workflow's own run history retention
// is set in the editor's trigger panel, saved, and shown again after a reload. axe-core on the run page.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, saveWorkflow, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { apiCall, heading, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Ada Lovelace');

describe('run control in chromium: cancel a running run, a workflow’s own retention', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  /** Requests to /hold not answered yet. */
  const held: http.ServerResponse[] = [];
  let holdRequests = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/hold') {
      holdRequests++;
      held.push(res);
    } else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);

  before(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${(receiver.address() as AddressInfo).port}` });
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    page = await context.newPage();
  });
  after(async () => {
    for (const res of held.splice(0)) res.destroy();
    await browser?.close();
    await flowdesk?.close();
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  test('Cancel run on the run page of a run inside its HTTP step: shown Cancelled, and its next step never runs', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Slow partner',
      triggerType: 'webhook',
      active: true,
      // One run at a time: the second run below starts only once the engine is done with the first.
      executionOrder: 'ordered',
      graph: {
        nodes: [
          { id: 'hold', type: 'http_request', params: { method: 'POST', url: `${url}/hold`, body: { n: '{{trigger.n}}' } } },
          { id: 'task', type: 'create_task', params: { title: 'after the partner {{trigger.n}}' } },
        ],
        edges: [
          { from: 'trigger', to: 'hold' },
          { from: 'hold', to: 'task' },
        ],
      },
    });
    assert.ok(wf.id, JSON.stringify(wf));
    const delivered = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify({ n: 1 }),
    });
    assert.equal(delivered.status, 200, await delivered.text());
    // The run is inside its HTTP step: the receiver holds the request.
    await until('the run’s HTTP step is waiting on the receiver', async () => holdRequests >= 1 || undefined);
    const run = await until('the running run', async () =>
      ((await api('GET', `/api/v1/workflows/${wf.id}/runs`)).items as any[]).find((r) => r.status === 'running'),
    );

    await page.goto(`${base}/runs/${run.id}`);
    await heading(page).filter({ hasText: 'Run of Slow partner' }).waitFor();
    await page.getByText('Running', { exact: true }).first().waitFor();
    await assertAccessible(page, 'a running run');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByText('Run cancelled: it stops before its next step.').waitFor();
    await page.getByText('Cancelled', { exact: true }).first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0, 'a cancelled run offers no Cancel');
    assert.equal((await api('GET', `/api/v1/workflow-runs/${run.id}`)).status, 'cancelled');

    // The partner answers now: the run stays cancelled and its Create Task never runs.
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    // A second run of the same workflow (ordered: it starts after the engine is done with the first)
    // goes through: once its task exists, the cancelled run's would exist too, had it run on.
    const second = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify({ n: 2 }),
    });
    assert.equal(second.status, 200);
    await until('the second run’s HTTP step', async () => {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return ((await api('GET', '/api/v1/tasks?q=after%20the%20partner')).items as any[]).length > 0 || undefined;
    });
    const titles = ((await api('GET', '/api/v1/tasks?q=after%20the%20partner')).items as any[]).map((t) => t.title);
    assert.deepEqual(titles, ['after the partner 2'], 'no task of the cancelled run');
    await page.reload();
    await page.getByText('Cancelled', { exact: true }).first().waitFor();
  });

  test('the workflow’s run history retention is set in the trigger panel, saved, and shown after a reload', async () => {
    const wf = await api('POST', '/api/v1/workflows', { name: 'Kept short', triggerType: 'manual' });
    await page.goto(`${base}/workflows/${wf.id}`);
    const days = page.getByLabel('Keep days');
    await days.fill('7');
    await saveWorkflow(page);
    assert.deepEqual((await api('GET', `/api/v1/workflows/${wf.id}`)).retention, { days: 7 });
    await page.reload();
    assert.equal(await page.getByLabel('Keep days').inputValue(), '7');
    await page.getByLabel('Keep newest runs').fill('100');
    await page.getByLabel('Keep days').fill('');
    await saveWorkflow(page);
    assert.deepEqual((await api('GET', `/api/v1/workflows/${wf.id}`)).retention, { runs: 100 });
    await page.getByLabel('Keep newest runs').fill('');
    await saveWorkflow(page);
    assert.equal((await api('GET', `/api/v1/workflows/${wf.id}`)).retention, null, 'both empty: the global setting');
  });
});
