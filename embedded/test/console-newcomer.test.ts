// What a new user tripped on in the console (issue 22, item 16), in Debian's chromium on a fresh
// embedded start: task priority, disabling a member, the schedule's time zone, the Workflows subtitle,
// the variable picker after selecting another node, and the canvas zoom with five steps. (List tables
// at phone width, which hid columns: console-phone-tables.test.ts, cards since issue 37.)
// Screenshots go to the temp folder (UPDATE_SCREENSHOTS=1: docs/screenshots/).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { ACTION_TIMEOUT_MS, PHONE, apiCall, heading, inviteAndSignUp, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Ada Lovelace');
const member = person('Grace Hopper');

describe('what a newcomer trips on in the console', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let fiveSteps = '';
  const call = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    (await inviteAndSignUp(context, browser, base, member)).close().catch(() => {});
    page = await context.newPage();
    // Something in every list: a key, tasks with a priority and a due date, a workflow with a long
    // name and five steps, and a run of it.
    await call('POST', '/api/v1/api-keys', { name: 'Laptop', scope: 'write' });
    await call('POST', '/api/v1/tasks', { title: 'Renew the TLS certificate', priority: 'high', dueDate: '2031-03-04' });
    await call('POST', '/api/v1/tasks', { title: 'Water the plants', priority: 'none' });
    const chain = ['trigger', 'http_1', 'condition_1', 'http_2', 'task_1', 'task_2'];
    const created = await call('POST', '/api/v1/workflows', {
      name: 'Quarterly customer health report for the sales team',
      triggerType: 'manual',
      graph: {
        nodes: [
          { id: 'http_1', type: 'http_request', params: { method: 'GET', url: 'https://crm.example.com/customers' } },
          { id: 'condition_1', type: 'condition', params: { left: '{{nodes.http_1.status}}', operator: 'equals', right: '200' } },
          { id: 'http_2', type: 'http_request', params: { method: 'GET', url: 'https://crm.example.com/health' } },
          { id: 'task_1', type: 'create_task', params: { title: 'Review the health report' } },
          { id: 'task_2', type: 'create_task', params: { title: 'Send the report' } },
        ],
        edges: chain.slice(1).map((to, i) => ({ from: chain[i]!, to, ...(chain[i] === 'condition_1' ? { branch: 'true' } : {}) })),
      },
    });
    fiveSteps = created.id;
    const csrf = (await (await context.request.get(`${base}/api/v1/session`)).json()).csrfToken;
    const run = await context.request.post(`${base}/api/v1/workflows/${fiveSteps}/runs`, {
      data: { payload: { quarter: 'Q3' } },
      headers: { origin: base, 'x-csrf-token': csrf, 'idempotency-key': 'first-run' },
    });
    assert.equal(run.status(), 202, await run.text());
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  test('Members: the owner disables a member (they cannot sign in) and enables them again', async () => {
    await page.goto(`${base}/settings/members`);
    const row = page.getByRole('row', { name: /Grace Hopper/ });
    await row.getByText('Active').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Disable Ada Lovelace' }).count(), 0, 'no way to lock yourself out');
    await page.getByRole('button', { name: 'Disable Grace Hopper' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /signed out everywhere/);
    await assertAccessible(page, 'disable member confirmation');
    await dialog.getByRole('button', { name: 'Disable account' }).click();
    await row.getByText('Disabled').waitFor();
    const signIn = () =>
      fetch(`${base}/api/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email: member.email, password: member.password }),
      });
    assert.equal((await signIn()).status, 401);
    await page.getByRole('button', { name: 'Enable Grace Hopper' }).click();
    await row.getByText('Active').waitFor();
    assert.equal((await signIn()).status, 201);
    await assertAccessible(page, 'members');
  });

  test('task priority shows in the list and on the board', async () => {
    await page.goto(`${base}/tasks`);
    const row = page.getByRole('row', { name: /Renew the TLS certificate/ });
    await row.getByText('High priority').waitFor();
    assert.equal(
      await page
        .getByRole('row', { name: /Water the plants/ })
        .getByText(/priority/)
        .count(),
      0,
      '"No priority" shows nothing',
    );
    await page.getByText('Board', { exact: true }).click();
    const card = page.getByRole('listitem').filter({ hasText: 'Renew the TLS certificate' });
    await card.getByText('High priority').waitFor();
    await assertAccessible(page, 'tasks board');
  });

  test("the Workflows subtitle names the five trigger types; a new schedule starts in the browser's time zone", async () => {
    const newYork = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true, timezoneId: 'America/New_York' });
    try {
      newYork.setDefaultTimeout(ACTION_TIMEOUT_MS);
      await newYork.addCookies(await context.cookies(base));
      const p = await newYork.newPage();
      await p.goto(`${base}/workflows`);
      await heading(p).filter({ hasText: 'Workflows' }).waitFor();
      const subtitle = await p.getByText(/A workflow starts from its trigger/).innerText();
      for (const kind of [/webhook/, /schedule/, /note/, /task, project or calendar entry/, /Run now/]) assert.match(subtitle, kind);
      await p.getByRole('button', { name: 'New workflow' }).first().click();
      await p.getByRole('dialog').getByLabel('Name').fill('Morning digest');
      await p
        .getByRole('dialog')
        .getByRole('radio', { name: /Schedule/ })
        .check();
      await p.getByRole('dialog').getByRole('button', { name: 'Create workflow' }).click();
      await p.getByRole('textbox', { name: 'Workflow name' }).waitFor();
      assert.equal(await p.getByLabel('Time zone', { exact: true }).first().inputValue(), 'America/New_York');
    } finally {
      await newYork.close();
    }
  });

  test('the variable picker follows the selected node: it names that node’s field and inserts into it', async () => {
    await page.goto(`${base}/workflows/${fiveSteps}`);
    // The middle of five steps: the fitted canvas shows them (the ends may be past its edges).
    // The canvas fits the graph with a short animation after loading: a click that lands while a node
    // is still moving hits the canvas instead, as a person's would, and is simply repeated. One try
    // is short (a click that waits for a moving node to be stable would spend the whole wait on its
    // first attempt); the ceiling is the generous default, as on a loaded machine the form renders late.
    const select = (node: string, field: string) =>
      until(
        `${node} selected`,
        async () => {
          await page
            .getByTestId(`node-${node}`)
            .click({ timeout: 2_000 })
            .catch(() => undefined);
          return (await page.getByLabel(field).isVisible()) ? true : undefined;
        },
        undefined,
        500,
      );
    await select('http_2', 'URL');
    await page.getByLabel('URL').click();
    const picker = page.getByText(/Inserts into “/);
    assert.equal(await picker.innerText(), 'Inserts into “URL”');
    await select('task_1', 'Title');
    assert.equal(await picker.innerText(), 'Inserts into “Title”', 'not the previous node’s field');
    const variable = page.getByRole('button', { name: /Insert \{\{trigger\./ }).first();
    const text = (await variable.getAttribute('title'))!.replace(/^Insert /, '');
    await variable.click();
    assert.equal(await page.getByLabel('Title').inputValue(), `Review the health report${text}`);
  });

  test('with five steps the canvas fits at a readable zoom (≥ 0.8), at desktop and phone width', async () => {
    const scale = async (p: Page) => {
      await p.getByTestId('node-task_2').waitFor();
      // React Flow draws at translate(0, 0) scale(1) first, then fits.
      const t = await until('the canvas to be fitted', async () => {
        const transform = await p.locator('.react-flow__viewport').evaluate((el: any) => el.style.transform as string);
        return /^translate\(0px, 0px\) scale\(1\)$/.test(transform) ? undefined : transform;
      });
      return Number(/scale\(([\d.]+)\)/.exec(t)![1]);
    };
    await page.goto(`${base}/workflows/${fiveSteps}`);
    const desktop = await scale(page);
    assert.ok(desktop >= 0.8, `desktop zoom ${desktop}`);
    const phone = await newContext(browser, PHONE);
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      await p.goto(`${base}/workflows/${fiveSteps}`);
      const small = await scale(p);
      assert.ok(small >= 0.8, `phone zoom ${small}`);
      await screenshot(p, 'editor-five-steps-phone');
    } finally {
      await phone.close();
    }
  });
});
