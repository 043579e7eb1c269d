// The workflow editor in Debian's chromium on a fresh embedded start (`npm start` in this process), as a
// person builds the example workflow: webhook trigger → Condition → HTTP Request (to a loopback receiver)
// → Create Task titled from the variable picker, with no JSON typed by hand. Also the workflows list,
// trigger settings (regenerate: old secret refused, new one accepted), a server validation error shown
// on its node, and a second user who never sees the first one's workflows. axe-core on the list (also at
// phone width) and the editor; screenshots for the README with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, ownerPage, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { until } from '@flowdesk/service-kit/testing';
import { ACTION_TIMEOUT_MS } from './support/console-session.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };
const other = { name: 'Grace Hopper', email: `grace-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

describe('the workflow editor in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: { method: string; url: string; body: string }[] = [];
  let specWorkflowId = '';

  before(async () => {
    // The HTTP Request node's target: a loopback server the SSRF guard is told to allow.
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ticket: 'T-1' }));
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    receiverUrl = `http://127.0.0.1:${port}/hooks/crm`;
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${port}` });
    base = flowdesk.base;
    browser = await launch();
    ({ context, page } = await ownerPage(browser, base, owner));
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  const api = async (p: Page, path: string) => {
    const res = await p.request.get(`${base}/api/v1${path}`);
    return { status: res.status(), body: res.status() === 200 ? await res.json() : null };
  };
  const deliver = (url: string, secret: string | null, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { 'x-webhook-secret': secret } : {}) },
      body: JSON.stringify(body),
    });

  const createWorkflow = async (name: string) => {
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New workflow' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByRole('button', { name: 'Create workflow' }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
    return page.url().split('/').at(-1)!;
  };
  const addStep = async (kind: 'Condition' | 'HTTP Request' | 'Create Task') => {
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: kind }).click();
  };
  const pick = (path: string) => page.getByRole('button', { name: `Insert {{${path}}}` }).click();
  const save = () => saveWorkflow(page);
  const revealSecret = async () => {
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    await until('the secret', async () => ((await page.getByTestId('webhook-secret').innerText()).startsWith('whsec_') ? true : undefined));
    return (await page.getByTestId('webhook-secret').innerText()).trim();
  };

  test('the list: empty, create, duplicate, delete with confirmation; accessible, also at phone width', async () => {
    await page.goto(`${base}/workflows`);
    await page.getByText('No workflows yet').waitFor();
    assert.equal(await page.getByRole('note', { name: /Workflows: coming soon/ }).count(), 0, 'Workflows is no longer marked "soon"');
    assert.equal(await page.getByRole('link', { name: 'Workflows', exact: true }).getAttribute('aria-current'), 'page');
    await assertAccessible(page, 'workflows (empty)');
    const id = await createWorkflow('Nightly report');
    await page.getByRole('link', { name: 'Workflows', exact: true }).first().click();
    await page.waitForURL(`${base}/workflows`);
    const row = page.getByRole('row', { name: /Nightly report/ });
    await row.getByText('Never').waitFor(); // the last run, once the runs API answered
    assert.match(await row.innerText(), /Webhook[\s\S]*Never[\s\S]*0/);
    await page.getByRole('button', { name: 'Actions for Nightly report' }).click();
    await page.getByRole('menuitem', { name: 'Duplicate' }).click();
    await page.getByRole('row', { name: /Nightly report \(copy\)/ }).waitFor();
    const list = (await api(page, '/workflows')).body.items as { id: string; name: string; active: boolean }[];
    const copy = list.find((w) => w.name === 'Nightly report (copy)');
    assert.ok(copy && copy.id !== id && copy.active === false, 'the copy is a new, inactive workflow');
    // The Active switch in the list activates and deactivates in place.
    await page.getByRole('switch', { name: 'Active: Nightly report', exact: true }).check({ force: true }); // its track covers the input: click where a person would
    await until('active', async () => ((await api(page, `/workflows/${id}`)).body.active === true ? true : undefined));
    await page.getByRole('switch', { name: 'Active: Nightly report', exact: true }).uncheck({ force: true });
    await until('inactive again', async () => ((await api(page, `/workflows/${id}`)).body.active === false ? true : undefined));
    await assertAccessible(page, 'workflows');
    await screenshot(page, 'workflows');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      await p.goto(`${base}/workflows`);
      await p.getByRole('row', { name: /Nightly report \(copy\)/ }).waitFor();
      await assertAccessible(p, 'workflows (phone)');
    } finally {
      await phone.close();
    }

    await page.getByRole('button', { name: 'Actions for Nightly report (copy)' }).click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('cannot be undone').waitFor();
    await dialog.getByRole('button', { name: 'Delete workflow' }).click();
    await page.getByRole('row', { name: /Nightly report \(copy\)/ }).waitFor({ state: 'detached' });
    assert.equal((await api(page, `/workflows/${copy.id}`)).status, 404);
    assert.equal((await api(page, `/workflows/${id}`)).status, 200, 'the original stays');
  });

  test('webhook → Condition → HTTP Request → Create Task built by hand: sample via curl, picked variables, activate, POST with the secret → the run live in the runs panel with each node, the task in the tasks view', async () => {
    specWorkflowId = await createWorkflow('New order → task');
    const url = (await page.getByTestId('webhook-url').innerText()).trim();
    assert.equal(url, `${base}/functions/v1/webhook-trigger/${specWorkflowId}`);
    // Before any delivery the picker says how to send one.
    await page.getByTestId('sample-waiting').waitFor();
    assert.match(await page.getByTestId('curl-command').innerText(), new RegExp(`curl -X POST '${url}'[\\s\\S]*x-webhook-secret: <your webhook secret>`));
    const secret = await revealSecret();
    assert.match(await page.getByTestId('curl-command').innerText(), new RegExp(`x-webhook-secret: ${secret}`), 'the revealed secret is in the command');

    // Activate (inactive workflows answer 404), then send the sample as the curl command would.
    assert.equal((await deliver(url, secret, { customer: { name: 'x' } })).status, 404, 'inactive: 404');
    await page.getByRole('switch', { name: 'Active' }).check();
    await page.getByText('Active: requests to this URL start the workflow.').waitFor();
    const sample = { customer: { name: 'Ada Lovelace', email: 'ada@example.com' }, order: { id: 'A-1001', total: 42 } };
    assert.equal(
      (
        await until('the webhook to accept', async () => {
          const r = await deliver(url, secret, sample);
          return r.status === 404 ? undefined : r;
        })
      ).status,
      200,
    );
    // The picker fills itself while the page is open (no reload).
    await page.getByRole('button', { name: 'Insert {{trigger.customer.name}}' }).waitFor({ timeout: 30_000 });

    // Condition: the customer has an email.
    await addStep('Condition');
    await page.getByLabel('Value to check').click();
    await pick('trigger.customer.email');
    assert.equal(await page.getByLabel('Value to check').inputValue(), '{{trigger.customer.email}}');
    // HTTP Request on the true branch, to the loopback receiver.
    await addStep('HTTP Request');
    await page.getByLabel('URL').fill('https://crm.example.com/hooks');
    assert.equal(await page.getByRole('status', { name: 'Private address' }).count(), 0, 'a public host: no warning');
    // A loopback target the operator has not allowed: the editor says the SSRF guard refuses it.
    const blockedPort = Number(new URL(receiverUrl).port) === 9 ? 10 : 9;
    await page.getByLabel('URL').fill(`http://127.0.0.1:${blockedPort}/hooks`);
    assert.match(
      await page.getByRole('status', { name: 'Private address' }).innerText(),
      new RegExp(
        `127\\.0\\.0\\.1 is a loopback address: the SSRF guard refuses it when the workflow runs, unless the operator allows it with SSRF_ALLOWLIST \\(e\\.g\\. SSRF_ALLOWLIST=127\\.0\\.0\\.1:${blockedPort}`,
      ),
    );
    // The loopback receiver this suite's SSRF_ALLOWLIST names: no warning.
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByRole('status', { name: 'Private address' }).waitFor({ state: 'detached' });
    // Create Task after it, titled from the picker, inserted at the caret.
    await addStep('Create Task');
    const title = page.getByLabel('Title');
    await title.fill('Call  about the order');
    await title.evaluate((el: any) => el.setSelectionRange(5, 5));
    await pick('trigger.customer.name');
    assert.equal(await title.inputValue(), 'Call {{trigger.customer.name}} about the order');
    // Highlighted, and previewed against the sample.
    const previewBox = page.getByTestId('variable-preview').first();
    assert.equal(await previewBox.locator('mark').first().innerText(), '{{trigger.customer.name}}');
    assert.equal(await page.getByTestId('preview-text').first().innerText(), 'Call Ada Lovelace about the order');
    // An expression previews against the sample the same way, computed; a broken one shows the engine's error.
    const notes = page.getByLabel('Notes');
    await notes.fill('Twice {{= trigger.order.total * 2 }} for {{= $uppercase(trigger.customer.name) }}');
    const notesPreview = page.getByTestId('variable-preview').nth(1);
    await until('the expression preview', async () =>
      (await notesPreview.getByTestId('preview-text').innerText()) === 'Twice 84 for ADA LOVELACE' ? true : undefined,
    );
    await notes.fill('Twice {{= trigger.order.total * }}');
    assert.match(await notesPreview.getByTestId('preview-error').innerText(), /^expression \{\{= trigger\.order\.total \* \}\} is not valid: /);
    await notes.fill('Order {{= trigger.order.id }}');
    await until('the fixed expression preview', async () =>
      (await notesPreview.getByTestId('preview-text').innerText()) === 'Order A-1001' ? true : undefined,
    );
    // Nodes after an HTTP Request list it; its fields come once a run (or Run this step) has them.
    await page.getByTestId('picker-source-nodes.http_1').getByText('Run the workflow or use Run this step to see this node’s fields.').waitFor();
    await assertAccessible(page, 'editor');
    await screenshot(page, 'editor');
    await save();

    const saved = (await api(page, `/workflows/${specWorkflowId}`)).body;
    assert.deepEqual(saved.graph.edges, [
      { from: 'trigger', to: 'condition_1' },
      { from: 'condition_1', to: 'http_1', branch: 'true' },
      { from: 'http_1', to: 'task_1' },
    ]);
    assert.equal(saved.graph.nodes.find((n: any) => n.id === 'task_1').params.title, 'Call {{trigger.customer.name}} about the order');

    // The runs panel, opened from the editor before the delivery: the run appears there live.
    await page.getByRole('link', { name: 'Runs', exact: true }).last().click();
    await page.waitForURL(`${base}/workflows/${specWorkflowId}/runs`);
    await page.getByRole('heading', { name: 'Runs · New order → task' }).waitFor();
    // The sample sent earlier already gave a run (of the then empty graph): the new one comes on top.
    const rows = page.locator('tr[data-run-id]');
    const before = await until('the earlier run listed', async () => ((await rows.count()) >= 1 ? rows.count() : undefined));
    await page.evaluate(() => ((globalThis as any).__stillHere = true)); // a reload would wipe it out
    assert.equal((await deliver(url, secret, { customer: { name: 'Grace Hopper', email: 'grace@example.com' } })).status, 200);
    await until(
      'the new run to show as succeeded in the runs panel',
      async () => ((await rows.count()) === before + 1 && /succeeded/i.test(await rows.first().innerText()) ? true : undefined),
      120_000,
    );
    assert.equal(await page.evaluate(() => (globalThis as any).__stillHere), true, 'the panel updated without a reload');
    // Its page: every node's input and output, in order.
    await rows.first().getByRole('link').first().click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const steps = page.locator('li[data-node-id]');
    await until('three steps', async () => ((await steps.count()) === 3 ? true : undefined));
    assert.deepEqual(await steps.evaluateAll((els) => els.map((e) => e.getAttribute('data-node-id'))), ['condition_1', 'http_1', 'task_1']);
    assert.match(await page.getByLabel('Output of condition_1').innerText(), /"result": true/);
    assert.match(await page.getByLabel('Input of http_1').innerText(), /\/hooks\/crm/);
    assert.match(await page.getByLabel('Output of http_1').innerText(), /"ticket": "T-1"/);
    assert.match(await page.getByLabel('Input of task_1').innerText(), /Call Grace Hopper about the order/);
    // And the task in the tasks view.
    await page.getByRole('link', { name: 'Tasks', exact: true }).first().click();
    await page.getByText('Call Grace Hopper about the order').first().waitFor();

    const run = await until('the run to finish', async () => {
      const runs = (await api(page, `/workflows/${specWorkflowId}/runs?limit=10`)).body?.items as any[] | undefined;
      return runs?.find((r) => r.triggerPayload?.customer?.name === 'Grace Hopper' && r.status !== 'queued' && r.status !== 'running');
    });
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(
      run.steps.map((s: any) => [s.nodeId, s.status]),
      [
        ['condition_1', 'succeeded'],
        ['http_1', 'succeeded'],
        ['task_1', 'succeeded'],
      ],
    );
    assert.ok(
      received.some((r) => r.method === 'POST' && r.url === '/hooks/crm'),
      'the receiver got the request',
    );
    const tasks = (await api(page, '/tasks?q=Grace')).body.items as { title: string }[];
    assert.ok(
      tasks.some((t) => t.title === 'Call Grace Hopper about the order'),
      JSON.stringify(tasks),
    );
    // The list shows the last run.
    await page.getByRole('link', { name: 'Workflows', exact: true }).first().click();
    const row = page.getByRole('row', { name: /New order → task/ });
    await row.getByText('Succeeded').waitFor();
  });

  test('at phone width (390 px) the editor fits: no sideways scrolling, every header button on screen, the node panel below the canvas; axe-core', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      p.setDefaultTimeout(ACTION_TIMEOUT_MS);
      await p.goto(`${base}/workflows/${specWorkflowId}`);
      await p.getByTestId('node-task_1').waitFor();
      const width = await p.evaluate(() => (globalThis as any).innerWidth as number);
      const overflow = async () => p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok((await overflow()) <= width, `no sideways scrolling (${await overflow()} > ${width})`);
      for (const name of ['Undo', 'Redo', 'Add step', 'Save']) {
        const box = (await p.getByRole('button', { name, exact: true }).boundingBox())!;
        assert.ok(box.x >= 0 && box.x + box.width <= width, `${name} is on screen: ${JSON.stringify(box)}`);
      }
      const canvas = (await p.getByRole('region', { name: 'Workflow canvas' }).boundingBox())!;
      const panel = p.getByRole('complementary', { name: 'Node panel' });
      const panelBox = (await panel.boundingBox())!;
      assert.ok(
        panelBox.y >= canvas.y + canvas.height - 1 && panelBox.width >= width - 1,
        `the panel is below the canvas at full width: ${JSON.stringify({ canvas, panelBox })}`,
      );
      assert.ok(canvas.height >= 280, `the canvas keeps room to work in (${canvas.height}px)`);
      await assertAccessible(p, 'editor (phone)');
      // Choosing a step brings its panel into view, with its form.
      // The canvas fits the graph to the screen with a short animation after loading: a tap that
      // lands while the node is still moving hits the canvas instead, as a person's would, and is
      // simply repeated.
      await until(
        'the step selected',
        async () => {
          await p.getByTestId('node-task_1').click();
          return (await panel.getByRole('heading', { name: 'Create Task', level: 2 }).isVisible()) ? true : undefined;
        },
        20_000,
        500,
      );
      await until('the panel scrolled into view', async () => {
        const box = await panel.getByLabel('Title').boundingBox();
        return box && box.y >= 0 && box.y + box.height <= 844 ? true : undefined;
      });
      assert.equal(await panel.getByLabel('Title').inputValue(), 'Call {{trigger.customer.name}} about the order');
      assert.ok((await overflow()) <= width, 'still no sideways scrolling with a step open');
      await assertAccessible(p, 'editor with a step (phone)');
    } finally {
      await phone.close();
    }
  });

  test('trigger settings: regenerating the secret (after a warning) refuses the old one and accepts the new one', async () => {
    await page.goto(`${base}/workflows/${specWorkflowId}`);
    const url = (await page.getByTestId('webhook-url').innerText()).trim();
    const old = await revealSecret();
    await page.getByRole('button', { name: 'Regenerate secret' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('every sender still using it gets 401').waitFor();
    await dialog.getByRole('button', { name: 'Regenerate secret' }).click();
    const fresh = await until('the new secret', async () => {
      const s = (await page.getByTestId('webhook-secret').innerText()).trim();
      return s.startsWith('whsec_') && s !== old ? s : undefined;
    });
    await until('the old secret to be refused', async () => ((await deliver(url, old, { n: 1 })).status === 401 ? true : undefined));
    assert.equal((await deliver(url, fresh, { n: 2 })).status, 200);
    assert.equal((await deliver(url, null, { n: 3 })).status, 401, 'no secret: refused');
    // Not requiring the secret is a switch; turning it back on restores the check.
    await page.getByRole('switch', { name: /Require x-webhook-secret/ }).uncheck();
    await until('delivery without a secret', async () => ((await deliver(url, null, { n: 4 })).status === 200 ? true : undefined));
    await page.getByRole('switch', { name: /Require x-webhook-secret/ }).check();
    await until('the secret to be required again', async () => ((await deliver(url, null, { n: 5 })).status === 401 ? true : undefined));
    // Standard Webhooks signing: unsigned deliveries are refused once it is on.
    await page.getByRole('switch', { name: /Sign deliveries/ }).check();
    await until('unsigned deliveries refused', async () => ((await deliver(url, fresh, { n: 6 })).status === 401 ? true : undefined));
    assert.equal((await api(page, `/workflows/${specWorkflowId}`)).body.triggerConfig.signature, 'standard-webhooks');
    // Signed: no x-webhook-secret is needed, and the sender's own signing secret may replace ours.
    assert.equal(await page.getByRole('switch', { name: /Require x-webhook-secret/ }).isDisabled(), true);
    const own = `whsec_${randomBytes(24).toString('base64')}`;
    await page.getByLabel('Use my own signing secret').fill(own);
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByText(`ending in ${own.slice(-4)}`).waitFor();
    const signedBody = '{"n":8}';
    const signedDelivery = () => {
      const ts = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', Buffer.from(own.slice(6), 'base64'))
        .update(`msg_own.${ts}.${signedBody}`)
        .digest('base64');
      return fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': 'msg_own', 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` },
        body: signedBody,
      });
    };
    await until("a delivery signed with the sender's secret", async () => ((await signedDelivery()).status === 200 ? true : undefined));
    await page.getByRole('switch', { name: /Sign deliveries/ }).uncheck();
    await page.getByRole('switch', { name: 'Active' }).uncheck();
    await page.getByText('Inactive: requests to this URL get 404').waitFor();
    await until('inactive: 404', async () => ((await deliver(url, fresh, { n: 7 })).status === 404 ? true : undefined));
    // The execution order is saved with the workflow.
    await page.getByRole('radio', { name: 'One at a time, in order' }).check();
    await save();
    assert.equal((await api(page, `/workflows/${specWorkflowId}`)).body.executionOrder, 'ordered');
  });

  test('a validation error from the server lands on the step it concerns; undo/redo; the unsaved-changes guard', async () => {
    await page.goto(`${base}/workflows/${specWorkflowId}`);
    await page.getByTestId('node-http_1').click();
    await page.getByLabel('URL').fill(`https://example.com/${'x'.repeat(2100)}`);
    await page.getByRole('button', { name: 'Save' }).click();
    const onNode = page.getByTestId('node-error-http_1');
    await onNode.waitFor();
    assert.match(await onNode.innerText(), /2000/);
    assert.equal(await page.getByTestId('node-error-task_1').count(), 0, 'only that step is marked');
    await page.getByTestId('panel-error').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'HTTP Request', level: 2 }).count(), 1, 'the panel shows the failing step');

    // Leaving with unsaved changes asks first; dismissing stays on the page.
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('link', { name: 'Workflows', exact: true }).first().click();
    assert.match(page.url(), new RegExp(`/workflows/${specWorkflowId}$`));

    // Undo the URL edit (outside a text field), redo it, undo again; then saving works.
    await page.getByRole('button', { name: 'Undo' }).click();
    assert.equal(await page.getByLabel('URL').inputValue(), receiverUrl);
    await page.getByRole('button', { name: 'Redo' }).click();
    assert.match(await page.getByLabel('URL').inputValue(), /x{2000}/);
    await page.getByRole('button', { name: 'Undo' }).click();
    await save();
    assert.equal(await page.getByTestId('node-error-http_1').count(), 0);

    // A step nobody connects: the graph check names it.
    await page.getByTestId('node-task_1').click();
    await page.getByRole('button', { name: 'Delete step task_1' }).click();
    await page.getByTestId('node-condition_1').click();
    await addStep('HTTP Request'); // true branch is taken: goes on the false branch
    await page.getByLabel('URL').fill(receiverUrl);
    // A picker field dragged onto a header value drops its variable there (the sample is now the
    // last delivery of the previous test: {"n": …}).
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('x-delivery');
    // The step panel (form, On error, Retry, Run this step) is taller than the window: the drag starts
    // and ends with both in view, as a person scrolls the panel before dragging.
    const size = page.viewportSize();
    await page.setViewportSize({ width: size?.width ?? 1280, height: 1600 });
    await page.getByRole('button', { name: 'Insert {{trigger.n}}' }).dragTo(page.getByLabel('Header 1 value'));
    if (size) await page.setViewportSize(size);
    assert.equal(await page.getByLabel('Header 1 value').inputValue(), '{{trigger.n}}');
    // Connect by dragging from a handle to another node's handle; move a node by dragging it.
    await page.locator('.react-flow__handle.source[data-nodeid="http_1"]').dragTo(page.locator('.react-flow__handle.target[data-nodeid="http_2"]'));
    const before = (await page.getByTestId('node-http_2').boundingBox())!;
    await page.mouse.move(before.x + 40, before.y + 15);
    await page.mouse.down();
    await page.mouse.move(before.x + 40, before.y + 160, { steps: 8 });
    await page.mouse.up();
    await save();
    const graph = (await api(page, `/workflows/${specWorkflowId}`)).body.graph;
    assert.deepEqual(
      graph.edges.find((e: any) => e.to === 'http_2' && e.from === 'condition_1'),
      { from: 'condition_1', to: 'http_2', branch: 'false' },
    );
    assert.ok(
      graph.edges.some((e: any) => e.from === 'http_1' && e.to === 'http_2'),
      'the dragged connection is saved',
    );
    assert.ok(!graph.nodes.some((n: any) => n.id === 'task_1'), 'the deleted step is gone');
    const http2 = graph.nodes.find((n: any) => n.id === 'http_2');
    assert.deepEqual(http2.params.headers, { 'x-delivery': '{{trigger.n}}' });
    const http1 = graph.nodes.find((n: any) => n.id === 'http_1');
    assert.ok(
      http2.position.y > http1.position.y + 250,
      `the moved node is lower (it was placed 140 below): ${JSON.stringify([http1.position, http2.position])}`,
    );

    // Zoom and fit: the canvas's controls move its viewport; fitting brings every step into view.
    const viewport = () => page.locator('.react-flow__viewport').evaluate((el: any) => String(el.style.transform));
    const scaleOf = (t: string) => Number(/scale\(([\d.]+)\)/.exec(t)?.[1]);
    const start = scaleOf(await viewport());
    await page.getByRole('button', { name: 'Zoom Out' }).click();
    await until('zoomed out', async () => (scaleOf(await viewport()) < start ? true : undefined));
    await page.getByRole('button', { name: 'Zoom In' }).click();
    await page.getByRole('button', { name: 'Zoom In' }).click();
    await until('zoomed in', async () => (scaleOf(await viewport()) > start ? true : undefined));
    await page.getByRole('button', { name: 'Fit View' }).click();
    const canvas = (await page.getByRole('region', { name: 'Workflow canvas' }).boundingBox())!;
    await until('every step in view', async () => {
      for (const id of ['trigger', 'condition_1', 'http_1', 'http_2']) {
        const box = await page.getByTestId(`node-${id}`).boundingBox();
        if (!box || box.x < canvas.x || box.y < canvas.y || box.x + box.width > canvas.x + canvas.width || box.y + box.height > canvas.y + canvas.height)
          return undefined;
      }
      return true;
    });
  });

  test("a second user never sees the first user's workflows", async () => {
    const { csrfToken } = await (await page.request.get(`${base}/api/v1/session`)).json();
    const invite = await page.request.post(`${base}/api/v1/invites`, { data: { email: other.email }, headers: { origin: base, 'x-csrf-token': csrfToken } });
    assert.equal(invite.status(), 201, await invite.text());
    const { token } = await invite.json();
    const second = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    try {
      const p = await second.newPage();
      const signup = await p.request.post(`${base}/api/v1/signup`, { data: { ...other, inviteToken: token }, headers: { origin: base } });
      assert.equal(signup.status(), 201, await signup.text());
      await p.goto(`${base}/workflows`);
      await p.getByText('No workflows yet').waitFor();
      assert.equal(await p.getByText('New order → task').count(), 0);
      assert.deepEqual((await api(p, '/workflows')).body.items, []);
      await p.goto(`${base}/workflows/${specWorkflowId}`);
      await p.getByText('This workflow does not exist, or it is not yours.').waitFor();
      assert.equal((await api(p, `/workflows/${specWorkflowId}`)).status, 404);
      assert.equal((await api(p, `/workflows/${specWorkflowId}/runs`)).status, 404);
    } finally {
      await second.close();
    }
  });
});
