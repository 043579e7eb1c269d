// Every list page of the console at phone width (390 px) in Debian's chromium (issue 37, "phone-width
// tables cut their last columns"): each list table is a stack of cards there, one per row, every cell
// on screen after its column's name — the Workflows' Active switch (toggled from the card), a run's
// duration, a task's due badge, an API key's revoke button — and no page scrolls sideways; Projects,
// Notes, Calendar and the Overview fit too. axe-core on each. Screenshots go to the temp folder
// (UPDATE_SCREENSHOTS=1: docs/screenshots/).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { PHONE, apiCall, heading, inviteAndSignUp, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Ada Lovelace');
const member = person('Grace Hopper');
const LONG_NAME = 'Quarterly customer health report for the sales team';

/** What a list table looks like in the page: its headers, each body cell's name and box, its controls' boxes. */
interface TableLayout {
  display: string;
  /** How far the table's box scrolls sideways (0: nothing is hidden). */
  sideways: number;
  headers: string[];
  rows: { label: string | null; named: string; left: number; right: number }[][];
  controls: { name: string; left: number; right: number }[];
}

describe('list pages at 390 px', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let phone: BrowserContext;
  let p: Page;
  let base: string;
  let reportId = '';
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    (await inviteAndSignUp(context, browser, base, member)).close().catch(() => {});
    // Something in every list: a workflow with a long name (inactive), one that ran, tasks with a due
    // date, a key, a credential, a project, a note and an event today.
    reportId = (
      await api('POST', '/api/v1/workflows', {
        name: LONG_NAME,
        triggerType: 'webhook',
        active: false,
        graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'Read the report' } }], edges: [{ from: 'trigger', to: 'task' }] },
      })
    ).id;
    await api('PATCH', `/api/v1/workflows/${reportId}`, { description: 'Sent every quarter' });
    const quick = await api('POST', '/api/v1/workflows', {
      name: 'File a task',
      triggerType: 'manual',
      graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'Filed {{trigger.n}}' } }], edges: [{ from: 'trigger', to: 'task' }] },
    });
    const run = await api('POST', `/api/v1/workflows/${quick.id}/runs`, { payload: { n: 1 } });
    await until('the run finished', async () => ((await api('GET', `/api/v1/workflow-runs/${run.id}`)).status === 'succeeded' ? true : undefined));
    await api('POST', '/api/v1/tasks', { title: 'Renew the TLS certificate', priority: 'high', dueDate: '2031-03-04' });
    await api('POST', '/api/v1/api-keys', { name: 'Laptop', scope: 'write' });
    await api('POST', '/api/v1/credentials', { name: 'crm_token', value: 'secret-value' });
    await api('POST', '/api/v1/projects', { name: 'Website relaunch', description: 'New pages, new hosting' });
    await api('POST', '/api/v1/notes', { title: 'Launch checklist', content: '- DNS\n- TLS' });
    // Today at noon (the browser shares the machine's time zone): in this week's and this month's grid.
    const start = new Date();
    start.setHours(12, 0, 0, 0);
    await api('POST', '/api/v1/calendar-entries', {
      title: 'Design review',
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + 3_600_000).toISOString(),
    });
    phone = await newContext(browser, PHONE);
    await phone.addCookies(await context.cookies(base));
    p = await phone.newPage();
  });
  after(async () => {
    await phone?.close();
    await browser?.close();
    await flowdesk?.close();
  });

  const pageWidth = () => p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  const onScreen = (box: { left: number; right: number }) => box.left >= -1 && box.right <= PHONE.width + 1;

  /** The table `label` as laid out now (see TableLayout). */
  const layoutOf = (label: string) =>
    p.getByRole('region', { name: `${label} table` }).evaluate((box: any): TableLayout => {
      // No named functions in here: the test's compiler would wrap them in a helper the page lacks.
      const g = globalThis as any;
      const table = box.querySelector('table');
      return {
        display: g.getComputedStyle(table).display,
        sideways: box.scrollWidth - box.clientWidth,
        headers: [...table.querySelectorAll('thead th')].map((th: any) => String(th.textContent).replace(/\s+/g, ' ').trim()),
        rows: [...table.querySelectorAll('tbody tr')].map((tr: any) =>
          [...tr.children].map((td: any) => {
            const r = td.getBoundingClientRect();
            return { label: td.getAttribute('data-label'), named: g.getComputedStyle(td, '::before').content, left: r.left, right: r.right };
          }),
        ),
        controls: [...table.querySelectorAll('tbody button, tbody a, tbody input')].map((c: any) => {
          const r = c.getBoundingClientRect();
          return { name: c.getAttribute('aria-label') ?? String(c.textContent).trim(), left: r.left, right: r.right };
        }),
      };
    });

  /** The list table `label` at 390 px: cards, every column named and on screen, every control on screen; the page fits; axe-core. */
  async function assertCards(label: string, shot: string) {
    const region = p.getByRole('region', { name: `${label} table` });
    await region.locator('tbody tr').first().waitFor();
    const t = await layoutOf(label);
    assert.equal(t.display, 'block', `${label}: the table is stacked as cards at 390 px`);
    assert.ok(t.sideways <= 1, `${label}: nothing to scroll sideways to (${t.sideways} px)`);
    assert.ok(t.rows.length > 0);
    for (const row of t.rows) {
      assert.equal(row.length, t.headers.length, `${label}: a cell per column`);
      row.forEach((cell, i) => {
        assert.equal(cell.label, t.headers[i], `${label}: cell ${i} is named after its column`);
        assert.ok(cell.named !== 'none' && cell.named !== 'normal', `${label}: the name "${cell.label}" is shown on the card (${cell.named})`);
        assert.ok(onScreen(cell), `${label}: the ${t.headers[i]} cell is on screen: ${JSON.stringify(cell)}`);
      });
    }
    for (const c of t.controls) assert.ok(onScreen(c), `${label}: ${c.name} is on screen: ${JSON.stringify(c)}`);
    assert.equal(await p.getByRole('note', { name: 'More columns' }).count(), 0, `${label}: no "Scroll sideways" note: nothing is off screen`);
    const width = await pageWidth();
    assert.ok(width <= PHONE.width, `${label}: the page does not scroll sideways (${width} px)`);
    await screenshot(p, shot);
    await assertAccessible(p, `${label} at 390 px`);
  }

  test('Workflows: every column on the card, and the Active switch toggles the workflow from it', async () => {
    await p.goto(`${base}/workflows`);
    await heading(p).filter({ hasText: 'Workflows' }).waitFor();
    await assertCards('Workflows', 'workflows-phone');
    const card = p.getByRole('region', { name: 'Workflows table' }).locator('tbody tr').filter({ hasText: LONG_NAME });
    const name = (await card.getByRole('link', { name: LONG_NAME }).boundingBox())!;
    assert.ok(name.width >= 170, `the workflow's name has room to be read (${Math.round(name.width)} px)`);
    // Chromium's own accessibility tree still has a table: each card's cells with their column headers.
    const cdp = await phone.newCDPSession(p);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { role?: { value?: string }; name?: { value?: string } }[] };
    await cdp.detach();
    const roles = nodes.map((n) => n.role?.value);
    const headers = nodes.filter((n) => n.role?.value === 'columnheader').map((n) => n.name?.value);
    assert.deepEqual(headers, ['Name', 'Trigger', 'Active', 'Last run', 'Runs (24 h)', 'Actions'], 'the column headers are read');
    assert.ok(roles.filter((r) => r === 'cell').length >= 12, 'the cards are rows of cells');
    const active = card.getByRole('switch', { name: `Active: ${LONG_NAME}` });
    assert.equal(await active.isChecked(), false);
    // Tapped where a person would: the switch's track (it covers the input).
    const track = card.locator('td[data-label="Active"] .mantine-Switch-track');
    const box = (await track.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `the switch is on screen: ${JSON.stringify(box)}`);
    await track.click();
    await p.getByText(`“${LONG_NAME}” is active.`).waitFor();
    await until('the switch is on', async () => ((await active.isChecked()) ? true : undefined));
    assert.equal((await api('GET', `/api/v1/workflows/${reportId}`)).active, true, 'the workflow is active');
    await track.click();
    await until('the workflow is inactive again', async () => ((await api('GET', `/api/v1/workflows/${reportId}`)).active === false ? true : undefined));
  });

  test("Runs: a run's duration and trigger are on its card", async () => {
    await p.goto(`${base}/runs`);
    await heading(p).filter({ hasText: 'Runs' }).waitFor();
    await assertCards('Runs', 'runs-phone');
    const card = p.getByRole('region', { name: 'Runs table' }).locator('tbody tr').first();
    const duration = card.locator('td[data-label="Duration"]');
    assert.match(await duration.innerText(), /\d+(\.\d+)? ?(ms|s)\b/, 'the duration is shown');
    assert.ok(await duration.isVisible());
    assert.match(await card.locator('td[data-label="Trigger"]').innerText(), /\S/);
  });

  test("Tasks: a task's due badge is on its card", async () => {
    await p.goto(`${base}/tasks`);
    await heading(p).filter({ hasText: 'Tasks' }).waitFor();
    await assertCards('Tasks', 'tasks-phone');
    const card = p.getByRole('region', { name: 'Tasks table' }).locator('tbody tr').filter({ hasText: 'Renew the TLS certificate' });
    const due = card.locator('td[data-label="Due"]').getByText(/^Due /);
    await due.waitFor();
    const box = (await due.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `the due badge is on screen: ${JSON.stringify(box)}`);
  });

  test('API keys, Credentials, Members and a workflow’s History: cards, every column and button on screen', async () => {
    for (const [path, label, title, shot] of [
      ['/settings/api-keys', 'API keys', 'API keys', 'api-keys-table-phone'],
      ['/settings/credentials', 'Credentials', 'Credentials', 'credentials-phone'],
      ['/settings/members', 'Members', 'Members', 'members-phone'],
      [`/workflows/${reportId}/history`, 'Versions', 'History', 'history-phone'],
    ] as const) {
      await p.goto(`${base}${path}`);
      await heading(p).filter({ hasText: title }).waitFor();
      await assertCards(label, shot);
    }
    // The revoke button, the last column, is on its card and opens its confirmation.
    await p.goto(`${base}/settings/api-keys`);
    await p.getByRole('button', { name: 'Revoke Laptop' }).click();
    await p.getByRole('dialog').waitFor();
    await p.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  });

  test('Projects, Notes, Calendar (week and month) and the Overview fit: no sideways scrolling, every button on screen', async () => {
    const buttonsOnScreen = () =>
      p.locator('main').evaluate((main: any) =>
        [...main.querySelectorAll('button, a, input')]
          .map((c: any) => ({ name: c.getAttribute('aria-label') ?? String(c.textContent).trim(), r: c.getBoundingClientRect() }))
          .filter((c: any) => c.r.width > 0 && (c.r.left < -1 || c.r.right > 391))
          .map((c: any) => `${c.name} (${Math.round(c.r.left)}–${Math.round(c.r.right)})`),
      );
    for (const [path, title, shown] of [
      ['/projects', 'Projects', 'Website relaunch'],
      ['/notes', 'Notes', 'Launch checklist'],
      ['/calendar', 'Calendar', 'Design review'],
      ['/', 'Welcome, Ada', 'Due this week'],
    ] as const) {
      await p.goto(`${base}${path}`);
      await heading(p).filter({ hasText: title }).waitFor();
      await p.getByText(shown).first().waitFor();
      const width = await pageWidth();
      assert.ok(width <= PHONE.width, `${title}: the page does not scroll sideways (${width} px)`);
      assert.deepEqual(await buttonsOnScreen(), [], `${title}: every button and link is on screen`);
      await assertAccessible(p, `${title} at 390 px`);
      if (path === '/calendar') {
        await p.locator('label', { hasText: /^Month$/ }).click();
        await p.getByRole('button', { name: /Design review/ }).waitFor();
        const month = await pageWidth();
        assert.ok(month <= PHONE.width, `the month grid does not scroll sideways (${month} px)`);
        assert.deepEqual(await buttonsOnScreen(), [], 'month: every button on screen');
        await assertAccessible(p, 'Calendar (month) at 390 px');
      }
    }
  });
});
