// The hosted form trigger (docs/triggers.md, "Form") in Debian's chromium on a fresh embedded start:
// a form workflow created in the console, its fields edited in the trigger panel (a label, a new
// select with options, a field moved and one removed), a Create Task step using a form field picked
// from the variable picker; the public URL answers "not found" while the workflow is inactive; a
// visitor in another browser context (no session) opens the URL, fills and submits the form, sees
// the thank-you text, and the owner sees the run with the answers as its trigger data and the task.
// axe-core on the trigger panel and on the public form; the form at 390 px without sideways scrolling.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, ownerPage, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

/** Polls `check` until it returns a value (generous ceiling: a loaded 2-core machine). */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a hosted form trigger in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let id = '';
  let formUrl = '';

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ context, page } = await ownerPage(browser, base, owner));
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const get = async (path: string) => {
    const res = await page.request.get(`${base}/api/v1${path}`);
    assert.equal(res.status(), 200, await res.text());
    return res.json();
  };
  const panel = () => page.getByRole('complementary', { name: 'Node panel' });

  test('the console: a form trigger’s fields edited, a step using one of them, saved and switched on', async () => {
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New workflow' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Demo requests');
    await dialog.getByRole('radio', { name: 'Form', exact: true }).check();
    await dialog.getByRole('button', { name: 'Create workflow' }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    id = page.url().split('/').at(-1)!;
    await panel().getByRole('heading', { name: 'Form trigger', level: 2 }).waitFor();
    // A new form trigger starts as a contact form, saved valid.
    const created = await get(`/workflows/${id}`);
    assert.equal(created.triggerType, 'form');
    assert.deepEqual(
      created.triggerConfig.fields.map((f: { name: string }) => f.name),
      ['name', 'email', 'message'],
    );
    formUrl = await panel().getByTestId('form-url').innerText();
    assert.equal(formUrl, `${base}/form/${id}`);

    await panel().getByLabel('Title').fill('Book a demo');
    // A field whose label is cleared cannot be saved: the message is at the field, nothing is sent.
    await panel().getByLabel('Field 1 label').fill('');
    await panel().getByText('Give the field a label.').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('save-error').waitFor();
    await panel().getByLabel('Field 1 label').fill('Your name');
    // Its key stays `name`: it was set when the field was made, not from this label.
    assert.equal(await panel().getByLabel('Field 1 key').inputValue(), 'name');

    // A new select field, with its key from its label.
    await panel().getByRole('button', { name: 'Add field' }).click();
    await panel().getByLabel('Field 4 label').fill('Team size');
    assert.equal(await panel().getByLabel('Field 4 key').inputValue(), 'team_size');
    await panel().getByLabel('Field 4 type').selectOption('select');
    await panel().getByText('Give at least one option, one per line.').waitFor();
    await panel().getByLabel('Field 4 options').fill('1–10\n11–50\n51+');
    await panel().getByLabel('Required').nth(3).check();
    // Moved above the message, which is removed.
    await panel().getByRole('button', { name: 'Move field 4 up' }).click();
    assert.equal(await panel().getByLabel('Field 3 label').inputValue(), 'Team size');
    await panel().getByRole('button', { name: 'Remove field 4' }).click();
    await panel().getByRole('textbox', { name: 'Thank-you text' }).fill('Thanks! We will write to you today.');
    await saveWorkflow(page);

    // A step that uses the answers, picked from the form's own variables (an example until a submission).
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'Create Task' }).click();
    await panel().getByLabel('Title').click();
    await panel().getByRole('button', { name: 'Insert {{trigger.name}}' }).click();
    assert.equal(await panel().getByLabel('Title').inputValue(), '{{trigger.name}}');
    await panel().getByRole('button', { name: 'Insert {{trigger.team_size}}' }).waitFor();
    await panel().getByRole('button', { name: 'Insert {{trigger.submittedAt}}' }).waitFor();
    await panel().getByLabel('Title').fill('Demo for {{trigger.name}} ({{trigger.team_size}})');
    await saveWorkflow(page);
    const saved = await get(`/workflows/${id}`);
    assert.deepEqual(saved.triggerConfig, {
      title: 'Book a demo',
      description: 'Leave your details and we will get back to you.',
      fields: [
        { name: 'name', label: 'Your name', type: 'text', required: true },
        { name: 'email', label: 'Email', type: 'email', required: true },
        { name: 'team_size', label: 'Team size', type: 'select', required: true, options: ['1–10', '11–50', '51+'] },
      ],
      thankYou: 'Thanks! We will write to you today.',
    });

    // Inactive: the public URL is a "not found" page.
    const inactive = await page.request.get(formUrl);
    assert.equal(inactive.status(), 404);
    assert.match(await inactive.text(), /Form not found/);

    await page.getByTestId('node-trigger').click();
    await page.getByRole('switch', { name: 'Active' }).check();
    await page.getByText('Active: the form takes answers at its URL; each one starts a run.').waitFor();
    await assertAccessible(page, 'form trigger settings');
    await screenshot(page, 'trigger-form');
  });

  test('a visitor fills and submits the hosted form; the owner sees the run with the answers, and the task', async () => {
    assert.ok(id, 'the first test made the workflow');
    // Another browser, no session: the form is public. The page's own CSP is enforced here.
    const visitor = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const form = await visitor.newPage();
      form.setDefaultTimeout(20_000);
      // Activation reaches ingest within its directory cache (a workflow.changed event, at most a second).
      await until('the form to be served', async () => ((await form.goto(formUrl))?.status() === 200 ? true : undefined));
      await form.getByRole('heading', { name: 'Book a demo', level: 1 }).waitFor();
      assert.equal(await form.title(), 'Book a demo');
      await form.getByLabel('Your name').fill('Grace Hopper');
      await form.getByLabel('Email').fill('grace@example.com');
      await form.getByLabel('Team size').selectOption('11–50');
      // The browser's own checks stop an empty required field before anything is sent.
      await form.getByLabel('Email').fill('');
      await form.getByRole('button', { name: 'Submit' }).click();
      assert.equal(form.url(), formUrl, 'not sent: Email is required');
      assert.equal(await form.getByLabel('Email').evaluate((el) => (el as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing), true);
      await form.getByLabel('Email').fill('grace@example.com');
      await form.getByRole('button', { name: 'Submit' }).click();
      await form.waitForURL(`${formUrl}/thanks`);
      await form.getByRole('status').getByText('Thanks! We will write to you today.').waitFor();
    } finally {
      await visitor.close();
    }

    // The owner's runs: one run, started by the form, with the answers as its trigger data.
    await page.goto(`${base}/workflows/${id}/runs`);
    const rows = page.locator('tr[data-run-id]');
    await until('the run to be listed', async () => ((await rows.count()) === 1 ? true : undefined), 60_000);
    assert.match(await rows.first().innerText(), /Form/);
    const runId = (await rows.first().getAttribute('data-run-id'))!;
    await page.goto(`${base}/runs/${runId}`);
    const run = await until(
      'the run to finish',
      async () => {
        const r = await get(`/workflow-runs/${runId}`);
        return r.status === 'queued' || r.status === 'running' ? undefined : r;
      },
      60_000,
    );
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.triggerType, 'form');
    const { submittedAt, ...answers } = run.triggerPayload;
    assert.deepEqual(answers, { name: 'Grace Hopper', email: 'grace@example.com', team_size: '11–50' });
    assert.ok(Math.abs(Date.parse(submittedAt) - Date.now()) < 5 * 60_000, submittedAt);
    const payload = page.locator('pre[aria-label="Trigger payload"]');
    await until('the payload on the run page', async () => (/"team_size": "11–50"/.test(await payload.innerText()) ? true : undefined));
    assert.match(await payload.innerText(), /"name": "Grace Hopper"/);
    const tasks = (await get('/tasks?q=Grace')).items as { title: string }[];
    assert.ok(
      tasks.some((t) => t.title === 'Demo for Grace Hopper (11–50)'),
      JSON.stringify(tasks),
    );
  });

  test('the public form is accessible (axe-core) and fits 390 px; the trigger panel too', async () => {
    assert.ok(id, 'the first test made the workflow');
    // axe is injected as a script: this context lets it past the page's no-script CSP.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      const p = await phone.newPage();
      p.setDefaultTimeout(20_000);
      await p.goto(formUrl);
      await p.getByRole('heading', { name: 'Book a demo', level: 1 }).waitFor();
      const width = await p.evaluate(() => (globalThis as any).innerWidth as number);
      const scrollWidth = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok(scrollWidth <= width, `no sideways scrolling (${scrollWidth} > ${width})`);
      const box = (await p.getByRole('button', { name: 'Submit' }).boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= width, `the button fits: ${JSON.stringify(box)}`);
      await assertAccessible(p, 'the hosted form (phone)');
      await screenshot(p, 'form-public-phone');

      await phone.addCookies(await context.cookies(base));
      await p.goto(`${base}/workflows/${id}`);
      await p.getByRole('complementary', { name: 'Node panel' }).getByTestId('form-url').waitFor();
      const panelScroll = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok(panelScroll <= width, `the editor at 390 px: no sideways scrolling (${panelScroll} > ${width})`);
      await assertAccessible(p, 'form trigger settings (phone)');
    } finally {
      await phone.close();
    }
  });
});
