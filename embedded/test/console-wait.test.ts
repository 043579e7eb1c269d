// A waiting run on the console's run page in Debian's chromium (issue 24, "Waits"): a run parked at a
// Wait node (mode resume) shows where it waits and its resume link; Approve resumes it, and it goes on
// along the Wait's `resumed` branch (a task is created) while the page updates in place. A run parked
// on an hour's timer offers its owner Resume now (issue 37): pressed, the run goes on at once, once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { apiCall, heading, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Ada Lovelace');

const approval = {
  name: 'Approve the refund',
  triggerType: 'webhook',
  active: true,
  graph: {
    nodes: [
      { id: 'approval', type: 'wait', params: { mode: 'resume' } },
      { id: 'refund', type: 'create_task', params: { title: 'Refund {{trigger.order}} ({{nodes.approval.resumedBy}})' } },
      { id: 'declined', type: 'create_task', params: { title: 'Declined {{trigger.order}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'approval' },
      { from: 'approval', to: 'refund', branch: 'resumed' },
      { from: 'approval', to: 'declined', branch: 'rejected' },
    ],
  },
};

describe('a waiting run in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    context = await newContext(browser);
    await setUpOwner(context, base, owner);
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  test('Approve on the run page resumes the run', async () => {
    const wf = await api('POST', '/api/v1/workflows', approval);
    const res = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify({ order: 'A-17' }),
    });
    assert.equal(res.status, 200, await res.text());
    const run = await until('the run waiting', async () => {
      const items = (await api('GET', `/api/v1/workflows/${wf.id}/runs`)).items as { id: string; status: string }[];
      return items.find((r) => r.status === 'waiting');
    });

    await page.goto(`${base}/runs/${run.id}`);
    await heading(page).filter({ hasText: 'Run of Approve the refund' }).waitFor();
    const notice = page.getByRole('status').filter({ hasText: 'Waiting at "approval"' });
    await notice.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Resume now' }).count(), 0, 'a wait for Approve / Reject has no Resume now');
    assert.match(await page.getByLabel('Resume link', { exact: true }).innerText(), new RegExp(`^${base}/api/v1/resume/[0-9a-f-]{36}\\?secret=`));
    await assertAccessible(page, 'waiting run');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: the run continues.').waitFor();
    const done = await until('the run finished', async () => {
      const r = await api('GET', `/api/v1/workflow-runs/${run.id}`);
      return r.status !== 'waiting' && r.status !== 'running' && r.status !== 'queued' ? r : undefined;
    });
    // The page follows the run as the engine records it.
    // (Badges are upper-cased by CSS, which innerText reflects.)
    await until('the run page shows it succeeded', async () => (await page.getByRole('button', { name: 'Approve' }).count()) === 0 || undefined);
    await page.locator('li[data-node-id="refund"]').waitFor();
    assert.doesNotMatch(await page.locator('main').innerText(), /Waiting at/);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(
      done.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status]),
      [
        ['approval', 'succeeded'],
        ['refund', 'succeeded'],
        ['declined', 'skipped'],
      ],
    );
    const tasks = (await api('GET', '/api/v1/tasks?limit=100')).items as { title: string }[];
    assert.deepEqual(
      tasks.map((t) => t.title).filter((t) => /A-17/.test(t)),
      ['Refund A-17 (approve)'],
    );
  });

  test('Resume now on the run page of a run waiting an hour: it goes on at once, once, and the page follows', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Remind me in an hour',
      triggerType: 'manual',
      graph: {
        nodes: [
          { id: 'pause', type: 'wait', params: { mode: 'duration', amount: '1', unit: 'hours' } },
          { id: 'remind', type: 'create_task', params: { title: 'Reminder {{trigger.n}} ({{nodes.pause.resumedBy}})' } },
        ],
        edges: [
          { from: 'trigger', to: 'pause' },
          { from: 'pause', to: 'remind', branch: 'resumed' },
        ],
      },
    });
    const started = await api('POST', `/api/v1/workflows/${wf.id}/runs`, { payload: { n: 'R-1' } });
    await until('the run waiting', async () => ((await api('GET', `/api/v1/workflow-runs/${started.id}`)).status === 'waiting' ? true : undefined));

    await page.goto(`${base}/runs/${started.id}`);
    await heading(page).filter({ hasText: 'Run of Remind me in an hour' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: /Waiting at "pause"\s*Resumes at/ })
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);
    const resumeNow = page.getByRole('button', { name: 'Resume now' });
    await assertAccessible(page, 'a run waiting for its timer');
    // The button's POST carries the session's CSRF token, as every cookie write does.
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/api/v1/workflow-runs/${started.id}/resume-now`));
    await resumeNow.click();
    assert.ok((await sent).headers()['x-csrf-token'], 'the write carries X-CSRF-Token');
    await page.getByText('Resumed: the run goes on now.').waitFor();
    // The page follows the run as the engine records it: the step after the Wait appears, the notice and the button go.
    await page.locator('li[data-node-id="remind"]').waitFor();
    await until('the page no longer says it waits', async () => ((await page.getByText('Waiting at "pause"').count()) === 0 ? true : undefined));
    assert.equal(await resumeNow.count(), 0);
    const done = await api('GET', `/api/v1/workflow-runs/${started.id}`);
    assert.equal(done.status, 'succeeded');
    // Pressed again by hand (an old tab): refused, and the run is not run twice.
    const session = await (await context.request.get(`${base}/api/v1/session`)).json();
    const again = await context.request.post(`${base}/api/v1/workflow-runs/${started.id}/resume-now`, {
      headers: { origin: base, 'x-csrf-token': session.csrfToken },
    });
    assert.equal(again.status(), 409, await again.text());
    const noToken = await context.request.post(`${base}/api/v1/workflow-runs/${started.id}/resume-now`, { headers: { origin: base } });
    assert.equal(noToken.status(), 403, 'a cookie write without the CSRF token is refused');
    const tasks = (await api('GET', '/api/v1/tasks?limit=100')).items as { title: string }[];
    assert.deepEqual(
      tasks.map((t) => t.title).filter((t) => /R-1/.test(t)),
      ['Reminder R-1 (timer)'],
    );
  });
});
