// Trigger settings in the workflow editor (docs/triggers.md, docs/console.md) in Debian's chromium on a
// fresh embedded start: a schedule workflow created through the UI (presets, a custom cron refused
// inline and not saved, a server refusal shown on the trigger, the description and next 5 runs, the
// trigger's variables), and a manual workflow started with Run now and a JSON payload (checked before
// sending, one run for a double click), whose run shows "Manual by <email>" and can be run again while
// the workflow is inactive, also from the workflows list's row menu. axe-core at desktop and phone width
// (the list with run badges included); a screenshot with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, ownerPage, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { ACTION_TIMEOUT_MS } from './support/console-session.ts';

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

describe('trigger settings and Run now in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let scheduleId = '';

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
  const createWorkflow = async (name: string, trigger: string) => {
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New workflow' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByRole('radio', { name: trigger, exact: true }).check();
    await dialog.getByRole('button', { name: 'Create workflow' }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
    return page.url().split('/').at(-1)!;
  };
  /** The run once it is no longer queued or running (read through the public API). */
  const finishedRun = (runId: string) =>
    until(
      'the run to finish',
      async () => {
        const r = await get(`/workflow-runs/${runId}`);
        return r.status === 'queued' || r.status === 'running' ? undefined : r;
      },
      60_000,
    );
  const panel = () => page.getByRole('complementary', { name: 'Node panel' });
  const save = () => saveWorkflow(page);
  const nextRuns = () => panel().getByTestId('next-runs').getByRole('listitem');

  test('schedule: presets, time zone, a bad cron refused inline and not saved, a server refusal shown, the next 5 runs', async () => {
    scheduleId = await createWorkflow('Morning digest', 'Schedule');
    await panel().getByRole('heading', { name: 'Schedule trigger', level: 2 }).waitFor();
    // A new schedule starts at 09:00 every day, in the browser's time zone.
    assert.equal(await panel().getByLabel('Repeat').inputValue(), 'daily');
    await until('5 next runs', async () => ((await nextRuns().count()) === 5 ? true : undefined));
    const created = await get(`/workflows/${scheduleId}`);
    assert.equal(created.triggerType, 'schedule');
    assert.equal(created.triggerConfig.cron, '0 9 * * *');

    // Every week on Monday at 08:30, Berlin time.
    await panel().getByLabel('Repeat').selectOption('weekly');
    await panel().getByLabel('On', { exact: true }).selectOption({ label: 'Monday' });
    await panel().getByLabel('At', { exact: true }).fill('08:30');
    await panel().getByLabel('Time zone').selectOption('Europe/Berlin');
    const preview = panel().getByTestId('schedule-preview');
    await until('the description', async () => (/At 08:30, only on Monday \(Europe\/Berlin\)/.test(await preview.innerText()) ? true : undefined));
    const ticks = await nextRuns().allInnerTexts();
    assert.equal(ticks.length, 5);
    for (const t of ticks) assert.match(t, /^Mon,? .* 08:30$/, t);
    // The canvas says it in words too.
    assert.match(await page.getByTestId('node-trigger').innerText(), /At 08:30, only on Monday/);
    await page.getByText('Unsaved changes').waitFor();
    await save();
    assert.deepEqual((await get(`/workflows/${scheduleId}`)).triggerConfig, { cron: '30 8 * * 1', timezone: 'Europe/Berlin', missed: 'run_once' });

    // A custom expression that is not valid: a clear error at the field, nothing sent.
    await panel().getByLabel('Repeat').selectOption('custom');
    const cron = panel().getByLabel('Cron expression');
    assert.equal(await cron.inputValue(), '30 8 * * 1');
    await cron.fill('61 8 * * 1');
    await panel()
      .getByText(/Invalid value for minute/)
      .waitFor();
    assert.equal(await cron.getAttribute('aria-invalid'), 'true');
    assert.equal(await panel().getByTestId('next-runs').count(), 0);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('save-error').getByText('Fix the marked steps').waitFor();
    await cron.fill('0 9 * *');
    await panel()
      .getByText(/five fields/)
      .first()
      .waitFor();
    assert.equal((await get(`/workflows/${scheduleId}`)).triggerConfig.cron, '30 8 * * 1', 'nothing was saved');

    // Weekdays at 07:45; missed ticks skipped.
    await cron.fill('45 7 * * 1-5');
    await until('the new description', async () => (/At 07:45, Monday through Friday/.test(await preview.innerText()) ? true : undefined));
    await panel().getByRole('radio', { name: 'Skip them' }).check();

    // The server has the last word: a refusal (here a time zone the server does not know, put into
    // the request on its way) lands on the trigger with the server's message, and nothing is saved.
    await page.route(`${base}/api/v1/workflows/${scheduleId}`, async (route) => {
      if (route.request().method() !== 'PATCH') return route.continue();
      const body = route.request().postDataJSON() as { triggerConfig?: Record<string, unknown> };
      await route.continue({ postData: JSON.stringify({ ...body, triggerConfig: { ...body.triggerConfig, timezone: 'Mars/Olympus_Mons' } }) });
    });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await panel()
      .getByTestId('panel-error')
      .getByText(/unknown time zone "Mars\/Olympus_Mons"/)
      .waitFor();
    await page.getByTestId('save-error').waitFor();
    await page.unroute(`${base}/api/v1/workflows/${scheduleId}`);
    assert.equal((await get(`/workflows/${scheduleId}`)).triggerConfig.cron, '30 8 * * 1');

    await save();
    assert.deepEqual((await get(`/workflows/${scheduleId}`)).triggerConfig, { cron: '45 7 * * 1-5', timezone: 'Europe/Berlin', missed: 'skip' });
    await page.getByText('Unsaved changes').waitFor({ state: 'detached' });

    // A reload opens the saved settings: a custom expression, Berlin, skip.
    await page.reload();
    await panel().getByRole('heading', { name: 'Schedule trigger', level: 2 }).waitFor();
    assert.equal(await panel().getByLabel('Repeat').inputValue(), 'custom');
    assert.equal(await panel().getByLabel('Cron expression').inputValue(), '45 7 * * 1-5');
    assert.equal(await panel().getByLabel('Time zone').inputValue(), 'Europe/Berlin');
    assert.equal(await panel().getByRole('radio', { name: 'Skip them' }).isChecked(), true);
    await until('5 next runs', async () => ((await nextRuns().count()) === 5 ? true : undefined));
    for (const t of await nextRuns().allInnerTexts()) assert.match(t, /^(Mon|Tue|Wed|Thu|Fri),? .* 07:45$/, t);
    // The variables a schedule provides (an example until it has run).
    const vars = panel().getByTestId('trigger-variables');
    for (const v of ['scheduledFor', 'firedAt', 'cron', 'timezone', 'missedTicks'])
      await vars.getByRole('button', { name: `Insert {{trigger.${v}}}` }).waitFor();
    assert.match(await vars.innerText(), /example/);

    await panel().getByLabel('Repeat').selectOption('weekly');
    await panel().getByLabel('On', { exact: true }).selectOption({ label: 'Monday' });
    await panel().getByLabel('At', { exact: true }).fill('08:30');
    await until('the description', async () => (/At 08:30, only on Monday/.test(await preview.innerText()) ? true : undefined));
    await assertAccessible(page, 'schedule trigger settings');
    await screenshot(page, 'trigger-schedule');
    await save();
  });

  test('schedule settings at phone width (390 px): no sideways scrolling, the next runs on screen; axe-core', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      p.setDefaultTimeout(ACTION_TIMEOUT_MS);
      await p.goto(`${base}/workflows/${scheduleId}`);
      const list = p.getByRole('complementary', { name: 'Node panel' }).getByTestId('next-runs');
      await list.waitFor();
      const width = await p.evaluate(() => (globalThis as any).innerWidth as number);
      const scrollWidth = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok(scrollWidth <= width, `no sideways scrolling (${scrollWidth} > ${width})`);
      await list.scrollIntoViewIfNeeded();
      const box = (await list.boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= width, `the next runs fit: ${JSON.stringify(box)}`);
      await assertAccessible(p, 'schedule trigger settings (phone)');
    } finally {
      await phone.close();
    }
  });

  test('manual: Run now with a JSON payload (checked first; a double click is one run), the run says Manual by <email>, run again while inactive', async () => {
    const id = await createWorkflow('Hand run', 'Manual');
    await panel().getByRole('heading', { name: 'Manual trigger', level: 2 }).waitFor();
    // A step that uses the payload, with the variable picked from the manual trigger's example.
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'Create Task' }).click();
    await panel().getByLabel('Title').click();
    await panel().getByRole('button', { name: 'Insert {{trigger.message}}' }).click();
    assert.equal(await panel().getByLabel('Title').inputValue(), '{{trigger.message}}');
    await save();

    await page.getByTestId('node-trigger').click();
    await panel().getByRole('button', { name: 'Run now' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run “Hand run” now' });
    const payload = dialog.getByLabel('Payload (JSON)');
    await until('focus in the dialog', async () => ((await payload.evaluate((el) => el === (globalThis as any).document.activeElement)) ? true : undefined));
    await payload.fill('{"message": ');
    await dialog.getByText(/Not valid JSON/).waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Run', exact: true }).isDisabled(), true);
    await payload.fill('[1, 2]');
    await dialog.getByText(/must be a JSON object/).waitFor();
    await payload.fill('{"message": "Hello from the console"}');
    await dialog.getByText(/Not valid JSON|must be a JSON object/).waitFor({ state: 'detached' });
    await assertAccessible(page, 'run now dialog');
    // Keyboard: Tab stays in the dialog.
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => !!(globalThis as any).document.activeElement?.closest('[role="dialog"]')), 'focus stays in the dialog');
    }
    const starts: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url() === `${base}/api/v1/workflows/${id}/runs`) starts.push(r.headers()['idempotency-key']);
    });
    await dialog.getByRole('button', { name: 'Run', exact: true }).dblclick();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').at(-1)!;
    const summary = page.locator('main');
    const finished = await finishedRun(runId);
    assert.equal(finished.status, 'succeeded', JSON.stringify(finished));
    await until('the page to show it succeeded', async () => (/succeeded/i.test(await summary.innerText()) ? true : undefined));
    assert.match(await summary.innerText(), new RegExp(`Manual by ${owner.email.replace(/[.]/g, '\\.')}`));
    assert.match(await page.locator('pre[aria-label="Trigger payload"]').innerText(), /"message": "Hello from the console"/);
    const run = await get(`/workflow-runs/${runId}`);
    assert.equal(run.triggerType, 'manual');
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal((await get(`/workflows/${id}/runs?limit=10`)).items.length, 1, 'a double click started one run');
    assert.ok(starts.length >= 1 && starts.every((k) => k && k === starts[0]), `one Idempotency-Key per dialog: ${JSON.stringify(starts)}`);
    const tasks = (await get('/tasks?q=Hello')).items as { title: string }[];
    assert.ok(
      tasks.some((t) => t.title === 'Hello from the console'),
      JSON.stringify(tasks),
    );
    await assertAccessible(page, 'manual run');

    // The workflow is inactive, and a manual run runs anyway: Run again is enabled.
    assert.equal((await get(`/workflows/${id}`)).active, false);
    const again = page.getByRole('button', { name: 'Run again with this payload' });
    assert.equal(await again.isEnabled(), true);
    await again.click();
    await page.waitForURL((url) => /\/runs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(runId));
    await until('the second run to succeed', async () => (/succeeded/i.test(await summary.innerText()) ? true : undefined), 60_000);
    assert.match(await summary.innerText(), /Run again of/);

    // The runs list names the triggers.
    await page.goto(`${base}/workflows/${id}/runs`);
    const rows = page.locator('tr[data-run-id]');
    await until('two runs listed', async () => ((await rows.count()) === 2 ? true : undefined));
    const texts = await rows.allInnerTexts();
    assert.match(texts[0]!, /Run again/);
    assert.match(texts[1]!, new RegExp(`Manual by ${owner.email.replace(/[.]/g, '\\.')}`));
    await assertAccessible(page, 'runs with trigger types');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      p.setDefaultTimeout(ACTION_TIMEOUT_MS);
      await p.goto(`${base}/workflows/${id}`);
      await p.getByRole('button', { name: 'Run now' }).first().click();
      await p.getByRole('dialog').getByLabel('Payload (JSON)').waitFor();
      await assertAccessible(p, 'run now dialog (phone)');
    } finally {
      await phone.close();
    }
  });
  test('Run now from the workflows list: the row’s actions open the same dialog, and the run it starts opens', async () => {
    const created = await page.request.post(`${base}/api/v1/workflows`, {
      data: {
        name: 'Listed hand run',
        triggerType: 'manual',
        graph: {
          nodes: [{ id: 'make', type: 'create_task', params: { title: 'From the list: {{trigger.message}}' } }],
          edges: [{ from: 'trigger', to: 'make' }],
        },
      },
      headers: { 'x-csrf-token': ((await get('/session')) as { csrfToken: string }).csrfToken, origin: base },
    });
    assert.equal(created.status(), 201, await created.text());
    const id = ((await created.json()) as { id: string }).id;

    await page.goto(`${base}/workflows`);
    await page
      .getByRole('cell', { name: /succeeded/i })
      .first()
      .waitFor();
    await assertAccessible(page, 'workflows list with runs');
    await page.getByRole('button', { name: 'Actions for Listed hand run' }).click();
    await page.getByRole('menuitem', { name: 'Run now' }).click();
    await page.getByRole('menu').waitFor({ state: 'detached' });
    const dialog = page.getByRole('dialog', { name: 'Run “Listed hand run” now' });
    await dialog.getByLabel('Payload (JSON)').fill('{"message": "row menu"}');
    await assertAccessible(page, 'run now dialog from the list');
    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').at(-1)!;
    const run = await finishedRun(runId);
    assert.equal(run.workflowId, id);
    assert.equal(run.triggerType, 'manual');
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const tasks = (await get('/tasks?q=row%20menu')).items as { title: string }[];
    assert.ok(
      tasks.some((t) => t.title === 'From the list: row menu'),
      JSON.stringify(tasks),
    );
    await until('the page to show it succeeded', async () => (/succeeded/i.test(await page.locator('main').innerText()) ? true : undefined));
  });
  test('entity and note: switching the trigger type, choosing which changes start a run; the variables they provide', async () => {
    const project = await page.request.post(`${base}/api/v1/projects`, {
      data: { name: 'Launch' },
      headers: { 'x-csrf-token': ((await get('/session')) as { csrfToken: string }).csrfToken, origin: base },
    });
    assert.equal(project.status(), 201, await project.text());
    const projectId = ((await project.json()) as { id: string }).id;
    const id = await createWorkflow('On changes', 'Webhook');
    await panel().getByTestId('webhook-url').waitFor();

    await panel().getByLabel('Trigger type').selectOption('entity');
    await panel().getByRole('heading', { name: 'Entity change trigger', level: 2 }).waitFor();
    await until('saved as entity', async () => ((await get(`/workflows/${id}`)).triggerType === 'entity' ? true : undefined));
    assert.deepEqual((await get(`/workflows/${id}`)).triggerConfig, { entity: 'task' });
    await panel().getByRole('checkbox', { name: 'Completed' }).waitFor();
    await panel().getByLabel('Entity', { exact: true }).selectOption('project');
    assert.equal(await panel().getByRole('checkbox', { name: 'Completed' }).count(), 0, 'only tasks are completed');
    await panel().getByRole('checkbox', { name: 'Deleted' }).uncheck();
    const vars = panel().getByTestId('trigger-variables');
    for (const v of ['entity', 'event', 'entityId', 'before', 'after', 'changedAt'])
      await vars.getByRole('button', { name: `Insert {{trigger.${v}}}` }).waitFor();
    await save();
    assert.deepEqual((await get(`/workflows/${id}`)).triggerConfig, { entity: 'project', events: ['created', 'updated'] });
    await assertAccessible(page, 'entity trigger settings');

    await panel().getByLabel('Trigger type').selectOption('note');
    await panel().getByRole('heading', { name: 'Note trigger', level: 2 }).waitFor();
    await until('saved as note', async () => ((await get(`/workflows/${id}`)).triggerType === 'note' ? true : undefined));
    await panel().getByRole('checkbox', { name: 'Created' }).uncheck();
    await panel().getByLabel('Project').selectOption({ label: 'Launch' });
    await panel().getByLabel('Tag').fill('meeting');
    await panel().getByLabel('Title contains').fill('Weekly');
    for (const v of ['event', 'note', 'previous', 'changedAt']) await vars.getByRole('button', { name: `Insert {{trigger.${v}}}` }).waitFor();
    await save();
    assert.deepEqual((await get(`/workflows/${id}`)).triggerConfig, { events: ['updated'], projectId, tag: 'meeting', titleContains: 'Weekly' });
    await assertAccessible(page, 'note trigger settings');
  });
});
