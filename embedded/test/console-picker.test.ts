// The variable picker's earlier steps and loop item (issue #25 item 7) in Debian's chromium on a fresh
// embedded start: a workflow run once, then a later step's picker lists the earlier nodes' output
// fields from that run (never later nodes), a pick inserts {{nodes.<id>.<path>}} at the caret, and a
// step inside a For each body gets `item` (the list's first element) and `index`. axe-core, also at 390 px.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { until } from '@flowdesk/service-kit/testing';
import { assertAccessible, launch, ownerPage, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

// trigger → set_1 → loop_1 (each: set_2; done: task_1).
const graph = {
  nodes: [
    {
      id: 'set_1',
      type: 'set_fields',
      name: 'Tidy',
      params: {
        fields: [
          { name: 'who', value: '{{trigger.customer.name}}' },
          { name: 'lines', value: '{{= $count(trigger.lines) }}' },
        ],
      },
    },
    { id: 'loop_1', type: 'for_each', params: { items: '{{trigger.lines}}' } },
    { id: 'set_2', type: 'set_fields', params: { fields: [{ name: 'pick', value: '' }] } },
    { id: 'task_1', type: 'create_task', params: { title: 'Ship the order' } },
  ],
  edges: [
    { from: 'trigger', to: 'set_1' },
    { from: 'set_1', to: 'loop_1' },
    { from: 'loop_1', to: 'set_2', branch: 'each' },
    { from: 'loop_1', to: 'task_1', branch: 'done' },
  ],
};
const payload = {
  customer: { name: 'Grace Hopper' },
  lines: [
    { sku: 'MUG-1', qty: 2 },
    { sku: 'CAP-1', qty: 1 },
  ],
};

describe('the variable picker in chromium: earlier steps from the last run, and the loop item', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let page: Page;
  let base: string;
  let csrf: string;
  let workflowId: string;

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ page } = await ownerPage(browser, base, owner));
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    csrf = ((await (await page.request.get(`${base}/api/v1/session`)).json()) as { csrfToken: string }).csrfToken;
    const headers = { origin: base, 'x-csrf-token': csrf };
    const created = await page.request.post(`${base}/api/v1/workflows`, { data: { name: 'Picker', triggerType: 'manual', graph }, headers });
    assert.equal(created.status(), 201, await created.text());
    workflowId = ((await created.json()) as { id: string }).id;
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const panel = () => page.getByRole('complementary', { name: 'Node panel' });
  const openStep = async (id: string) => {
    await page.getByTestId(`node-${id}`).click();
    await panel().getByText(id, { exact: true }).waitFor();
  };

  test('before any run an earlier step says how to see its fields; after one run its fields come from that run and a pick inserts its path', async () => {
    await page.goto(`${base}/workflows/${workflowId}`);
    await page.getByTestId('node-task_1').waitFor();
    await openStep('task_1');
    const earlier = page.getByTestId('picker-source-nodes.set_1');
    await earlier.getByText('Run the workflow or use Run this step to see this node’s fields.').waitFor();
    // Only the nodes before it: the loop body (set_2) is not before task_1.
    assert.equal(await page.getByTestId('picker-source-nodes.set_2').count(), 0);

    const run = await page.request.post(`${base}/api/v1/workflows/${workflowId}/runs`, {
      data: { payload },
      headers: { origin: base, 'x-csrf-token': csrf, 'idempotency-key': randomUUID() },
    });
    assert.equal(run.status(), 202, await run.text());
    const runId = ((await run.json()) as { id: string }).id;
    await until('the run finished', async () => {
      const r = (await (await page.request.get(`${base}/api/v1/workflow-runs/${runId}`)).json()) as { status: string };
      return r.status === 'succeeded' ? true : undefined;
    });

    // The editor polls: the earlier step's fields appear without a reload.
    const who = page.getByRole('button', { name: 'Insert {{nodes.set_1.who}}' });
    await who.waitFor({ timeout: 30_000 });
    // A dry run on the new sample may show the fields first, while the run is still running; the run's own outputs then take over.
    await until('the fields from the last run', async () => (/last run/.test(await earlier.innerText()) ? true : undefined));
    assert.match(await earlier.innerText(), /Grace Hopper/);
    await page.getByRole('button', { name: 'Insert {{nodes.loop_1.results}}' }).waitFor();
    const title = panel().getByLabel('Title');
    await title.fill('Ship  now');
    await title.evaluate((el: any) => el.setSelectionRange(5, 5));
    await who.click();
    assert.equal(await title.inputValue(), 'Ship {{nodes.set_1.who}} now');
    assert.equal(await page.getByTestId('preview-text').first().innerText(), 'Ship Grace Hopper now');
    await assertAccessible(page, 'the picker with earlier steps');

    // The first step has nothing before it but the trigger.
    await openStep('set_1');
    assert.equal(await page.getByTestId('picker-source-nodes.set_1').count(), 0);
  });

  test('inside the For each body the picker lists item (the first line’s fields) and index, not the For each itself; at 390 px too', async () => {
    await openStep('set_2');
    const loop = page.getByTestId('picker-source-loop');
    await loop.getByRole('button', { name: 'Insert {{item.sku}}' }).waitFor();
    assert.match(await loop.innerText(), /MUG-1/);
    await loop.getByRole('button', { name: 'Insert {{index}}' }).waitFor();
    await page.getByTestId('picker-source-nodes.set_1').waitFor();
    assert.equal(await page.getByTestId('picker-source-nodes.loop_1').count(), 0);
    const value = panel().getByRole('textbox', { name: /1 value$/ });
    await value.click();
    await loop.getByRole('button', { name: 'Insert {{item.sku}}' }).click();
    assert.equal(await value.inputValue(), '{{item.sku}}');
    await until('the preview of the item', async () => ((await page.getByTestId('preview-text').first().innerText()) === 'MUG-1' ? true : undefined));
    await assertAccessible(page, 'the picker in a loop body');
    // Run this step tries the body step with that item (index 0), as the preview does.
    await panel().getByRole('button', { name: 'Run this step' }).click();
    await panel().getByTestId('run-step-result').waitFor();
    assert.deepEqual(JSON.parse(await panel().getByTestId('run-step-output').innerText()), { pick: 'MUG-1' });

    await page.setViewportSize({ width: 390, height: 844 });
    await loop.getByRole('button', { name: 'Insert {{item.qty}}' }).scrollIntoViewIfNeeded();
    const width = await page.evaluate(() => (globalThis as any).innerWidth as number);
    // The layout settles after the resize (the side panel takes its phone form): wait for it, bounded.
    let scroll = 0;
    await until(
      `no sideways scrolling at ${width} px`,
      async () => {
        scroll = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
        return scroll <= width;
      },
      10_000,
    ).catch(() => assert.fail(`no sideways scrolling (${scroll} > ${width})`));
    const box = (await loop.getByRole('button', { name: 'Insert {{item.qty}}' }).boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= width, `the item's field is on screen: ${JSON.stringify(box)}`);
    await assertAccessible(page, 'the picker in a loop body (phone)');
  });
});
