// The runs panel and the workspace views in Debian's chromium on a fresh embedded start, as a person
// uses them: runs filtered by status and a run arriving live (no reload), older runs on request, a
// run's page with every node's input and output and the skipped branch, run again; projects, tasks, calendar and notes
// created, edited, completed and deleted; the Overview's due task and failed run; a second user who
// sees none of it; axe-core on every page at desktop and phone width (the part-1 pages too). The
// Overview's run pipeline health, and a run's trace id on its page (tracing on, in memory, with a
// TRACE_URL_TEMPLATE: a link; copyable). A retried step's attempts and earlier errors on its run's page.
// Screenshots for the README with UPDATE_SCREENSHOTS=1 (run.png, tasks.png, overview.png).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMemoryTracing } from '@flowdesk/telemetry/testing';
import { assertAccessible, launch, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { PHONE, apiCall, heading, inviteAndSignUp, newContext, person, setUpOwner, until } from './support/console-session.ts';

// Before the stack starts: tracing on for this process (spans kept in memory), so runs record a trace id.
if (!skipWithoutChromium) startMemoryTracing();
const TRACE_URL_TEMPLATE = 'https://grafana.example/explore?traceId={traceId}';

const owner = person('Ada Lovelace');
const other = person('Grace Hopper');

/** Webhook → "has a name?" → (true) a task named after the customer, (false) an "unnamed" task. */
const branching = {
  name: 'New customer',
  triggerType: 'webhook',
  active: true,
  graph: {
    nodes: [
      { id: 'has_name', type: 'condition', params: { left: '{{trigger.customer.name}}', operator: 'exists' } },
      {
        id: 'named_task',
        type: 'create_task',
        params: { title: 'Call {{trigger.customer.name}}', notes: 'Plan {{trigger.plan}}', dueDate: new Date().toISOString().slice(0, 10) },
      },
      { id: 'unnamed_task', type: 'create_task', params: { title: 'Find out who signed up' } },
    ],
    edges: [
      { from: 'trigger', to: 'has_name' },
      { from: 'has_name', to: 'named_task', branch: 'true' },
      { from: 'has_name', to: 'unnamed_task', branch: 'false' },
    ],
  },
};
/** Always fails: the SSRF guard refuses the metadata address. */
const failing = {
  name: 'Metadata grab',
  triggerType: 'webhook',
  active: true,
  graph: {
    nodes: [{ id: 'grab', type: 'http_request', params: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' } }],
    edges: [{ from: 'trigger', to: 'grab' }],
  },
};

describe('the runs panel and the workspace views in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const wf: Record<'branching' | 'failing', { id: string; webhookSecret: string }> = {} as never;

  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);
  const deliver = async (w: { id: string; webhookSecret: string }, payload: unknown) => {
    const res = await fetch(`${base}/functions/v1/webhook-trigger/${w.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': w.webhookSecret },
      body: JSON.stringify(payload),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const finishedRuns = (workflowId: string, count: number) =>
    until(`${count} finished runs`, async () => {
      const items = ((await api('GET', `/api/v1/workflows/${workflowId}/runs`)).items as any[]).filter((r) =>
        ['succeeded', 'failed', 'skipped'].includes(r.status),
      );
      return items.length >= count ? items : undefined;
    });
  /** Rows of the runs table (data-run-id). */
  const runRows = (p = page) => p.locator('tr[data-run-id]');
  const filter = (label: string) => page.locator('label', { hasText: new RegExp(`^${label}$`) }).click();

  before(async () => {
    flowdesk = await startFlowdesk({ TRACE_URL_TEMPLATE });
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await setUpOwner(context, base, owner);
    page = await context.newPage();
    wf.branching = await api('POST', '/api/v1/workflows', branching);
    wf.failing = await api('POST', '/api/v1/workflows', failing);
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  test('runs: the list filters by status, and a new run appears live without a reload', async () => {
    await deliver(wf.branching, { customer: { name: 'Ada' } });
    await finishedRuns(wf.branching.id, 1);
    await page.goto(`${base}/runs`);
    await heading(page).filter({ hasText: 'Runs' }).waitFor();
    await until('one run listed', async () => (await runRows().count()) === 1);
    // A marker that a reload would wipe out.
    await page.evaluate(() => ((globalThis as any).__stillHere = true));

    await deliver(wf.failing, {});
    await page.locator('tr[data-run-id]', { hasText: 'Failed' }).waitFor();
    assert.equal(await runRows().count(), 2);
    assert.equal(await page.evaluate(() => (globalThis as any).__stillHere), true, 'the page was not reloaded');
    assert.ok(await page.getByRole('link', { name: 'Metadata grab' }).isVisible(), 'the workflow is named');

    await filter('Failed');
    await until('only failed runs', async () => (await runRows().count()) === 1 && /failed/i.test(await runRows().first().innerText()));
    await filter('Succeeded');
    await until('only succeeded runs', async () => (await runRows().count()) === 1 && /succeeded/i.test(await runRows().first().innerText()));
    await filter('Queued');
    await page.getByText('No queued runs').waitFor();
    await filter('All');
    await until('both runs again', async () => (await runRows().count()) === 2);
    await assertAccessible(page, 'runs');

    // One workflow's runs.
    await page.getByRole('link', { name: 'New customer' }).click();
    await page.waitForURL(`${base}/workflows/${wf.branching.id}/runs`);
    await heading(page).filter({ hasText: 'Runs · New customer' }).waitFor();
    await until('its one run', async () => (await runRows().count()) === 1);
    await assertAccessible(page, 'workflow runs');
  });

  test("a run's page: the payload, every node's input and output in order, the skipped branch and the warning; run again", async () => {
    await page.goto(`${base}/workflows/${wf.branching.id}/runs`);
    // The whole row opens the run (its duration cell here), not only its status link.
    const row = runRows().first();
    const rowRunId = await row.getAttribute('data-run-id');
    await row.locator('td').nth(2).click();
    await page.waitForURL(`${base}/runs/${rowRunId}`);
    await heading(page).filter({ hasText: 'Run of New customer' }).waitFor();
    const firstRunUrl = page.url();
    assert.match(await page.locator('pre[aria-label="Trigger payload"]').innerText(), /"name": "Ada"/);

    const steps = page.locator('li[data-node-id]');
    await until('three steps', async () => (await steps.count()) === 3);
    assert.deepEqual(await steps.evaluateAll((els) => els.map((e) => e.getAttribute('data-node-id'))), ['has_name', 'named_task', 'unnamed_task']);
    assert.match(await page.getByLabel('Output of has_name').innerText(), /"result": true/);
    assert.match(await page.getByLabel('Input of named_task').innerText(), /"title": "Call Ada"/);
    assert.match(await page.getByLabel('Output of named_task').innerText(), /Call Ada/);
    const skipped = page.locator('li[data-node-id="unnamed_task"]');
    assert.match(await skipped.innerText(), /skipped/i);
    assert.match(await skipped.innerText(), /Branch not taken/);
    // The missing {{trigger.plan}} is a warning on the node that used it.
    assert.match(await page.locator('li[data-node-id="named_task"]').innerText(), /plan/);
    // The run's trace: its id from the runs API, a link through TRACE_URL_TEMPLATE, and a copy button.
    const { traceId } = await api('GET', `/api/v1/workflow-runs/${firstRunUrl.split('/').pop()}`);
    assert.match(traceId, /^[0-9a-f]{32}$/);
    const traceLink = page.getByTestId('trace-link');
    assert.equal(await traceLink.getAttribute('href'), TRACE_URL_TEMPLATE.replace('{traceId}', traceId));
    assert.equal(await traceLink.getAttribute('target'), '_blank');
    assert.equal(await page.getByTestId('trace-id').innerText(), traceId);
    await assertAccessible(page, 'run');
    await screenshot(page, 'run');
    await page.getByRole('button', { name: 'Copy the trace id' }).click();
    await page.getByRole('button', { name: 'Trace id copied' }).waitFor();
    assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), traceId);

    await page.getByRole('button', { name: 'Run again with this payload' }).click();
    await page.waitForURL((url) => /\/runs\/[0-9a-f-]{36}$/.test(url.pathname) && url.href !== firstRunUrl);
    // It is queued, then updates in place as the engine records it.
    await page.locator('li[data-node-id="named_task"]').waitFor();
    assert.match(await page.locator('pre[aria-label="Trigger payload"]').innerText(), /"name": "Ada"/);
    assert.match(await page.locator('main').innerText(), /Run again of/);
    const runs = await finishedRuns(wf.branching.id, 2);
    assert.equal(runs[0].rerunOf, firstRunUrl.split('/').pop());
  });

  test('projects: create, edit, archive, delete', async () => {
    await page.goto(`${base}/projects`);
    await heading(page).filter({ hasText: 'Projects' }).waitFor();
    await page.getByText('No projects yet').waitFor();
    await assertAccessible(page, 'projects (empty)');
    await page.getByRole('button', { name: 'New project' }).first().click();
    await page.getByRole('dialog').getByLabel('Name').fill('Launch');
    await page.getByRole('dialog').getByLabel('Description').fill('Ship the beta');
    await page.getByRole('dialog').getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('listitem', { name: 'Launch' }).waitFor();
    await assertAccessible(page, 'projects');

    await page.getByRole('button', { name: 'Actions for Launch' }).click();
    await page.getByRole('menuitem', { name: 'Edit' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Launch v2');
    await page.getByRole('dialog').getByRole('button', { name: 'Save project' }).click();
    await page.getByRole('listitem', { name: 'Launch v2' }).waitFor();

    // A second project, kept for the tasks view; this one is archived ("complete"), then deleted.
    await api('POST', '/api/v1/projects', { name: 'Website' });
    await page.getByRole('button', { name: 'Actions for Launch v2' }).click();
    await page.getByRole('menuitem', { name: 'Archive' }).click();
    await page.getByText('Project archived.').waitFor();
    await until('archived', async () => (await page.getByRole('listitem', { name: 'Launch v2' }).count()) === 0);
    await filterLabel(page, 'Archived');
    await page.getByRole('button', { name: 'Actions for Launch v2' }).click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete project' }).click();
    await page.getByText('No archived projects').waitFor();
    const left = (await api('GET', '/api/v1/projects')).items.map((p: any) => p.name);
    assert.deepEqual(left, ['Website']);
  });

  test('tasks: create with a due date and project, edit, board by status, complete, delete', async () => {
    await page.goto(`${base}/tasks`);
    await heading(page).filter({ hasText: 'Tasks' }).waitFor();
    await page.getByRole('button', { name: 'New task' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Title').fill('Write the launch post');
    await dialog.getByLabel('Due date').fill(new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
    await dialog.getByLabel('Project').selectOption({ label: 'Website' });
    await dialog.getByRole('button', { name: 'Create task' }).click();
    const row = page.getByRole('row', { name: /Write the launch post/ });
    await row.waitFor();
    assert.match(await row.innerText(), /Website/);
    assert.match(await row.innerText(), /due /i);
    await assertAccessible(page, 'tasks');

    await page.getByRole('button', { name: 'Actions for Write the launch post' }).click();
    await page.getByRole('menuitem', { name: 'Edit' }).click();
    await dialog.getByLabel('Title').fill('Publish the launch post');
    await dialog.getByLabel('Status').selectOption({ label: 'In progress' });
    await dialog.getByRole('button', { name: 'Save task' }).click();
    await page.getByRole('row', { name: /Publish the launch post/ }).waitFor();

    // The board: a column per status.
    await filterLabel(page, 'Board');
    const inProgress = page.locator('section', { has: page.getByRole('heading', { name: 'In progress' }) });
    await inProgress.getByText('Publish the launch post').waitFor();
    await screenshot(page, 'tasks');
    await assertAccessible(page, 'tasks board');
    await page.getByRole('checkbox', { name: 'Complete Publish the launch post' }).click();
    const done = page.locator('section', { has: page.getByRole('heading', { name: 'Done' }) });
    await done.getByText('Publish the launch post').waitFor();

    await filterLabel(page, 'List');
    await page.getByLabel('Status').selectOption({ label: 'Done' });
    await page.getByRole('row', { name: /Publish the launch post/ }).waitFor();
    await page.getByRole('button', { name: 'Actions for Publish the launch post' }).click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete task' }).click();
    await page.getByText('No tasks here').waitFor();
    assert.ok(!(await api('GET', '/api/v1/tasks')).items.some((t: any) => t.title === 'Publish the launch post'));
  });

  test('calendar: week and month, create, edit, delete an event', async () => {
    await page.goto(`${base}/calendar`);
    await heading(page).filter({ hasText: 'Calendar' }).waitFor();
    await assertAccessible(page, 'calendar (week)');
    await page.getByRole('button', { name: 'New event', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Title').fill('Design review');
    await dialog.getByRole('button', { name: 'Create event' }).click();
    const event = page.getByRole('button', { name: / · Design review$/ });
    await event.waitFor();

    await event.click();
    await dialog.getByLabel('Title').fill('Design review (moved)');
    await dialog.getByRole('button', { name: 'Save event' }).click();
    await page.getByRole('button', { name: / · Design review \(moved\)$/ }).waitFor();

    await filterLabel(page, 'Month');
    await page.getByRole('button', { name: / · Design review \(moved\)$/ }).waitFor();
    await assertAccessible(page, 'calendar (month)');
    await page.getByRole('button', { name: 'Next month' }).click();
    await until('the next month has no event', async () => (await page.getByRole('button', { name: / · Design review/ }).count()) === 0);
    await page.getByRole('button', { name: 'Today' }).click();
    await page.getByRole('button', { name: / · Design review \(moved\)$/ }).click();
    await dialog.getByRole('button', { name: 'Delete event' }).click();
    await page.getByRole('dialog', { name: 'Delete this event?' }).getByRole('button', { name: 'Delete event' }).click();
    await until('the event is gone', async () => (await page.getByRole('button', { name: / · Design review/ }).count()) === 0);
    assert.equal((await api('GET', '/api/v1/calendar-entries')).items.length, 0);
  });

  test('notes: Markdown with a sanitized preview; create, edit, pin, delete', async () => {
    await page.goto(`${base}/notes`);
    await heading(page).filter({ hasText: 'Notes' }).waitFor();
    await page.getByRole('button', { name: 'New note' }).first().click();
    await page.getByLabel('Title').fill('Launch plan');
    await page
      .getByLabel('Content (Markdown)')
      .fill(
        '## Steps\n\n- **Write** the post\n- [docs](https://example.test)\n\n<img src=x onerror="globalThis.__xss=1">\n\n[bad](javascript:globalThis.__xss=2)',
      );
    await page.getByRole('switch', { name: 'Pinned' }).or(page.getByLabel('Pinned')).first().check();
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    await filterLabel(page, 'Preview');
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.getByRole('heading', { name: 'Steps' }).waitFor();
    assert.equal(await preview.locator('strong').innerText(), 'Write');
    assert.equal(await preview.locator('img').count(), 0, 'raw HTML is not rendered');
    assert.notEqual(
      await preview
        .getByRole('link', { name: 'bad' })
        .getAttribute('href')
        .catch(() => ''),
      'javascript:globalThis.__xss=2',
    );
    assert.equal(await page.evaluate(() => (globalThis as any).__xss), undefined);
    await assertAccessible(page, 'notes');
    const stored = (await api('GET', '/api/v1/notes')).items[0];
    assert.equal(stored.title, 'Launch plan');
    assert.equal(stored.pinned, true);

    await page.getByRole('button', { name: 'Delete note' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete note' }).click();
    await page.getByText('No notes yet').waitFor();
  });

  test('the Overview (home) shows a due task, the failed run and the connected apps', async () => {
    await api('POST', '/api/v1/tasks', { title: 'Send the invoices', dueDate: new Date().toISOString().slice(0, 10) });
    await api('POST', '/api/v1/api-keys', { name: 'Nightly export', scope: 'read' });
    await page.goto(base);
    await heading(page).filter({ hasText: 'Welcome, Ada' }).waitFor();
    const due = page.getByRole('region', { name: 'Due this week' });
    await due.getByText('Send the invoices').waitFor();
    assert.match(await due.innerText(), /due today/i);
    const runs = page.getByRole('region', { name: 'Recent runs' });
    await runs.getByText(/runs? in the last 24 hours, 1 failed/).waitFor();
    await runs.getByRole('link', { name: 'Metadata grab' }).waitFor();
    await page.getByRole('region', { name: 'Connected apps' }).getByText('Nightly export').waitFor();
    // The run pipeline: the failure of the last hour needs attention, named with its workflow.
    const pipeline = page.getByRole('region', { name: 'Run pipeline' });
    await pipeline.getByTestId('pipeline-verdict').filter({ hasText: 'Needs attention' }).waitFor();
    assert.match(await pipeline.innerText(), /1 run failed in 1 workflow/);
    const byStatus = await pipeline.getByRole('group', { name: 'Runs in the last hour by status' }).innerText();
    assert.match(byStatus, /Failed 1/);
    assert.match(byStatus, /Succeeded [1-9]/);
    // Every run has finished: nothing waits (the card reads the health again with each run event).
    await until('an empty backlog', async () =>
      /Waiting events\s*0[\s\S]*Unfinished runs\s*0[\s\S]*Dead-lettered\s*0/.test(await pipeline.locator('dl').innerText()),
    );
    const failingRow = pipeline.locator(`li[data-workflow-id="${wf.failing.id}"]`);
    assert.match(await failingRow.innerText(), /Metadata grab[\s\S]*1 of 1 failed[\s\S]*SSRF/);
    await assertAccessible(page, 'overview');
    await screenshot(page, 'overview');
    // Its "Failed runs" link opens the runs list filtered to failures; "Last failure" opens that run.
    await pipeline.getByRole('link', { name: 'Failed runs →' }).click();
    await heading(page).filter({ hasText: 'Runs' }).waitFor();
    await until('only the failed run', async () => (await runRows().count()) === 1 && /failed/i.test(await runRows().first().innerText()));
    await page.goBack();
    await page.getByRole('region', { name: 'Run pipeline' }).getByRole('link', { name: 'Last failure of Metadata grab' }).click();
    await heading(page).filter({ hasText: 'Run of Metadata grab' }).waitFor();
  });

  test('a second user sees none of it', async () => {
    const theirs = await inviteAndSignUp(context, browser, base, other);
    try {
      const p = await theirs.newPage();
      await p.goto(`${base}/runs`);
      await p.getByText('No runs yet').waitFor();
      await p.goto(`${base}/tasks`);
      await p.getByText('No tasks here').waitFor();
      await p.goto(`${base}/projects`);
      await p.getByText('No projects yet').waitFor();
      await p.goto(`${base}/notes`);
      await p.getByText('No notes yet').waitFor();
      await p.goto(base);
      await p.getByRole('region', { name: 'Recent runs' }).getByText('0 runs in the last 24 hours, 0 failed').waitFor();
      await p.getByRole('region', { name: 'Due this week' }).getByText('Nothing is due').waitFor();
      await p.getByRole('region', { name: 'Run pipeline' }).getByText('Healthy: runs keep up and none failed in the last hour').waitFor();
      assert.deepEqual((await p.request.get(`${base}/api/v1/workflow-runs/health`).then((r) => r.json())).failingWorkflows, [], 'no failure of another user');
      const runId = (await api('GET', '/api/v1/workflow-runs')).items[0].id;
      await p.goto(`${base}/runs/${runId}`);
      await p.getByText('This run could not be loaded').waitFor();
      const stream = await p.request.get(`${base}/api/v1/workflow-runs/stream?workflowId=${wf.branching.id}`);
      assert.equal(stream.status(), 404);
    } finally {
      await theirs.close();
    }
  });

  test('at phone width (390 px) every page passes axe-core, the part-1 pages included', async () => {
    const phone = await newContext(browser, PHONE);
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      const runId = (await api('GET', '/api/v1/workflow-runs')).items[0].id;
      const failedRunId = (await api('GET', '/api/v1/workflow-runs?status=failed')).items[0].id;
      const pages: [string, string][] = [
        ['/', 'Welcome, Ada'],
        [`/runs`, 'Runs'],
        [`/workflows/${wf.branching.id}/runs`, 'Runs · New customer'],
        [`/runs/${runId}`, 'Run of'],
        [`/runs/${failedRunId}`, 'Run of Metadata grab'],
        ['/projects', 'Projects'],
        ['/tasks', 'Tasks'],
        ['/calendar', 'Calendar'],
        ['/notes', 'Notes'],
        ['/settings/profile', 'Profile'],
        ['/settings/api-keys', 'API keys'],
        ['/settings/connected-apps', 'Connected Apps'],
        ['/settings/members', 'Members'],
        ['/settings/credentials', 'Credentials'],
        ['/workflows', 'Workflows'],
      ];
      for (const [path, title] of pages) {
        await p.goto(`${base}${path}`);
        await heading(p).filter({ hasText: title }).waitFor();
        await p.waitForLoadState('networkidle').catch(() => {});
        await assertAccessible(p, `${path} (phone)`);
        // Against the viewport's own width: a phone's innerWidth grows with a page that overflows
        // (it zooms out), so comparing with it could not catch one.
        const width = p.viewportSize()!.width;
        const scrollWidth = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
        assert.ok(scrollWidth <= width, `${path} (phone): no sideways scrolling (${scrollWidth} > ${width})`);
        // Every badge (a run's status, a trigger, a role) shows its whole label: a table at phone
        // width scrolls sideways rather than cut "Succeeded" down to "SUCCEE…".
        const cut = await p.evaluate(() =>
          [...(globalThis as any).document.querySelectorAll('.mantine-Badge-label')]
            .filter((e: any) => e.scrollWidth > e.clientWidth + 1)
            .map((e: any) => e.textContent as string),
        );
        assert.deepEqual(cut, [], `${path} (phone): badges cut short: ${cut.join(', ')}`);
      }
      // The six status filters do not fit side by side at this width: they are a list to pick from.
      await p.goto(`${base}/runs`);
      await p.getByRole('table', { name: 'Runs' }).waitFor();
      await p.getByRole('combobox', { name: 'Filter by status' }).click();
      await p.getByRole('option', { name: 'Failed' }).click();
      await until('only failed runs listed', async () => {
        const statuses = await p.getByRole('table', { name: 'Runs' }).locator('tbody .mantine-Badge-label').allTextContents();
        return statuses.length > 0 && statuses.every((t) => t === 'Failed');
      });
      await screenshot(p, 'runs-phone');
    } finally {
      await phone.close();
    }
    // Signed out, at phone width: sign-in and sign-up.
    const signedOut = await newContext(browser, PHONE);
    try {
      const p = await signedOut.newPage();
      await p.goto(`${base}/runs`);
      await heading(p).filter({ hasText: 'Sign in to Flowdesk' }).waitFor();
      await assertAccessible(p, 'sign-in (phone)');
      await p.goto(`${base}/sign-up`);
      await heading(p).first().waitFor();
      await assertAccessible(p, 'sign-up (phone)');
    } finally {
      await signedOut.close();
    }
  });

  test('runs: a long list shows the newest 50, the older ones on request; live updates keep them', async () => {
    const many = await api('POST', '/api/v1/workflows', {
      name: 'Busy',
      triggerType: 'webhook',
      active: true,
      graph: { nodes: [{ id: 'check', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } }], edges: [{ from: 'trigger', to: 'check' }] },
    });
    for (let n = 1; n <= 51; n++) await deliver(many, { n });
    await until(
      '51 finished runs',
      async () => ((await api('GET', `/api/v1/workflows/${many.id}/runs?limit=100`)).items as any[]).filter((r) => r.status === 'succeeded').length === 51,
      60_000,
    );
    await page.goto(`${base}/workflows/${many.id}/runs`);
    await heading(page).filter({ hasText: 'Runs · Busy' }).waitFor();
    await until('the newest 50', async () => (await runRows().count()) === 50);
    await page.getByRole('button', { name: 'Show older runs' }).click();
    await until('all 51', async () => (await runRows().count()) === 51);
    await page.getByText('All 51 runs').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Show older runs' }).count(), 0);
    // A new run arrives live: the list grows to 52, the older ones stay.
    await deliver(many, { n: 52 });
    await until('the new run on top, the older ones kept', async () => (await runRows().count()) === 52);
    await page.getByText('All 52 runs').waitFor();
    await assertAccessible(page, 'runs (longer list)');
  });

  test("a run's page shows a retried step's attempts and the earlier attempts' errors", async () => {
    // A Code node that always throws, retried 3 times on any failure, then continued past (onError).
    const flaky = await api('POST', '/api/v1/workflows', {
      name: 'Flaky step',
      triggerType: 'webhook',
      active: false,
      graph: {
        nodes: [
          {
            id: 'flaky',
            type: 'code',
            onError: 'continue',
            retry: { attempts: 3, backoff: 'fixed', delayMs: 10, on: ['any'] },
            params: { code: "throw new Error('upstream said no')" },
          },
        ],
        edges: [{ from: 'trigger', to: 'flaky' }],
      },
    });
    await api('POST', `/api/v1/workflows/${flaky.id}/runs`, { payload: {} });
    const [run] = await finishedRuns(flaky.id, 1);
    await page.goto(`${base}/runs/${run.id}`);
    const step = page.locator('li[data-node-id="flaky"]');
    await step.waitFor();
    assert.equal(await step.getByTestId('step-attempts').textContent(), '3 attempts');
    const earlier = step.getByRole('alert').filter({ hasText: 'Earlier attempts' });
    assert.equal(await earlier.locator('li').count(), 2, 'the two attempts before the last');
    assert.match(await earlier.innerText(), /upstream said no[\s\S]*upstream said no/);
    assert.match(await step.innerText(), /Error[\s\S]*upstream said no/, 'the last attempt is the step’s error');
    await assertAccessible(page, 'run (attempts)');
  });
});

/** A SegmentedControl's option (a visually hidden radio with its label). */
const filterLabel = (p: Page, label: string) => p.locator('label', { hasText: new RegExp(`^${label}$`) }).click();
