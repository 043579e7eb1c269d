// The pinned sample (issue #37 item 4) in chromium on a fresh embedded start: a sample typed in the
// editor is pinned, and a later step's preview and picker fill from the engine's dry run of the
// earlier, side-effect-free step — before any run, with nothing created; Run now starts from it; a
// run's page pins its delivery. axe-core, also at 390 px.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { until } from '@flowdesk/service-kit/testing';
import { assertAccessible, launch, ownerPage, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

// trigger → set_1 (computes from the trigger) → task_1 (Create Task: an action, never run by the dry run).
const graph = {
  nodes: [
    { id: 'set_1', type: 'set_fields', name: 'Tidy', params: { fields: [{ name: 'who', value: '{{= $uppercase(trigger.customer.name) }}' }] } },
    { id: 'task_1', type: 'create_task', params: { title: 'Call {{nodes.set_1.who}}' } },
  ],
  edges: [
    { from: 'trigger', to: 'set_1' },
    { from: 'set_1', to: 'task_1' },
  ],
};

describe('the pinned sample in chromium: later previews from a dry run, Run now from the sample', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let page: Page;
  let base: string;
  let headers: Record<string, string>;
  let workflowId: string;
  const get = async (path: string) => await (await page.request.get(`${base}/api/v1${path}`)).json();

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ page } = await ownerPage(browser, base, owner));
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    const csrf = ((await (await page.request.get(`${base}/api/v1/session`)).json()) as { csrfToken: string }).csrfToken;
    headers = { origin: base, 'x-csrf-token': csrf };
    const created = await page.request.post(`${base}/api/v1/workflows`, { data: { name: 'Pinned', triggerType: 'webhook', graph }, headers });
    assert.equal(created.status(), 201, await created.text());
    workflowId = ((await created.json()) as { id: string }).id;
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const panel = () => page.getByRole('complementary', { name: 'Node panel' });

  test('a typed sample is pinned; the later step’s preview and picker fill from the dry run; nothing is created; Run now is prefilled', async () => {
    await page.goto(`${base}/workflows/${workflowId}`);
    await page.getByTestId('node-task_1').click();
    await panel().getByText('task_1', { exact: true }).waitFor();
    const earlier = page.getByTestId('picker-source-nodes.set_1');
    await earlier.getByText('Run the workflow or use Run this step to see this node’s fields.').waitFor();
    assert.match(await page.getByTestId('preview-text').first().innerText(), /^Call\s*$/, 'no sample yet: the variable is empty');

    await page.getByTestId('sample-controls').getByRole('button', { name: 'Edit sample' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit the sample' });
    const text = dialog.getByLabel('Sample trigger data (JSON)');
    await text.fill('{ "customer": ');
    await dialog.getByText(/^Not valid JSON/).waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Pin sample' }).isDisabled(), true, 'invalid JSON cannot be pinned');
    await text.fill('{ "customer": { "name": "Grace Hopper" } }');
    await assertAccessible(page, 'the sample dialog');
    await dialog.getByRole('button', { name: 'Pin sample' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('sample-state').getByText('Sample: pinned · typed in').waitFor();

    // The dry run computed set_1 on the sample: the later step's preview and picker have it, without a run.
    await until('the later step’s preview from the dry run', async () =>
      (await page.getByTestId('preview-text').first().innerText()) === 'Call GRACE HOPPER' ? true : undefined,
    );
    await earlier.getByRole('button', { name: 'Insert {{nodes.set_1.who}}' }).waitFor();
    assert.match(await earlier.innerText(), /dry run on the sample/);
    assert.match(await earlier.innerText(), /GRACE HOPPER/);
    assert.deepEqual((await get('/tasks')).items, [], 'the dry run created no task');
    assert.deepEqual((await get(`/workflows/${workflowId}/runs`)).items, [], 'and recorded no run');
    const saved = await get(`/workflows/${workflowId}`);
    assert.deepEqual(saved.samplePayload, { customer: { name: 'Grace Hopper' } });
    assert.equal(saved.samplePin.source, 'typed');
    await assertAccessible(page, 'the editor with a pinned sample');

    // Run now starts from the pinned sample.
    await page.getByRole('button', { name: 'Run now' }).first().click();
    const runNow = page.getByRole('dialog', { name: /Run “Pinned” now/ });
    await runNow.getByText(/Prefilled from the pinned sample/).waitFor();
    assert.deepEqual(JSON.parse(await runNow.getByLabel('Payload (JSON)').inputValue()), { customer: { name: 'Grace Hopper' } });
    await runNow.getByRole('button', { name: 'Cancel' }).click();
    await runNow.waitFor({ state: 'detached' });

    // At 390 px the controls fit, no sideways scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('sample-controls').scrollIntoViewIfNeeded();
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    assert.ok(width <= 390, `no sideways scrolling at 390 px (${width})`);
    await assertAccessible(page, 'the sample controls at 390 px');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('a run’s page pins its delivery; unpinned, the badge says the sample is the last delivery', async () => {
    const run = await page.request.post(`${base}/api/v1/workflows/${workflowId}/runs`, {
      data: { payload: { customer: { name: 'Katherine Johnson' } } },
      headers: { ...headers, 'idempotency-key': `pin-${randomBytes(6).toString('hex')}` },
    });
    assert.equal(run.status(), 202, await run.text());
    const runId = ((await run.json()) as { id: string }).id;
    await until('the run finished', async () => ((await get(`/workflow-runs/${runId}`)).status === 'succeeded' ? true : undefined));
    assert.deepEqual((await get(`/workflows/${workflowId}`)).samplePayload, { customer: { name: 'Grace Hopper' } }, 'a run does not replace a pinned sample');

    await page.goto(`${base}/runs/${runId}`);
    await page.getByRole('button', { name: 'Pin this delivery as the sample' }).click();
    await until('the delivery pinned', async () => {
      const w = await get(`/workflows/${workflowId}`);
      return w.samplePin?.runId === runId ? w : undefined;
    });
    assert.deepEqual((await get(`/workflows/${workflowId}`)).samplePayload, { customer: { name: 'Katherine Johnson' } });

    await page.goto(`${base}/workflows/${workflowId}`);
    await page.getByTestId('node-task_1').click();
    await page.getByTestId('sample-state').getByText('Sample: pinned · from a delivery').waitFor();
    await page.getByTestId('sample-controls').getByRole('button', { name: 'Unpin' }).click();
    await page
      .getByTestId('sample-state')
      .getByText(/Sample: last delivery/)
      .waitFor();
    assert.equal((await get(`/workflows/${workflowId}`)).samplePin, null);
  });
});
