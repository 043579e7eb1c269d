// A workflow's version history in Debian's chromium on a fresh embedded start (docs/workflow-versions.md,
// "In the console"): a workflow edited twice in the editor, its History lists the three versions, the
// first one opened read-only and compared with the current one (the changed parameter, the step added,
// the edge added, the name changed), restored after a confirmation that says a new version is saved, and
// the editor shows the restored definition. The run page's version link opens this view. The Workflows
// list's sort control. axe-core on the history, the diff and the dialog, and at 390 px.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { apiCall, heading, newContext, person, PHONE, setUpOwner, until } from './support/console-session.ts';

const owner = person('Katherine Johnson');

describe('workflow history in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);
  let workflowId = '';

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

  /** Selects a step on the editor's canvas (retried: the canvas fits itself with a short animation after loading). */
  const selectStep = async (id: string, heading: string) => {
    const panel = page.getByRole('complementary', { name: 'Node panel' });
    await until(
      `step ${id} selected`,
      async () => {
        await page.getByTestId(`node-${id}`).click();
        return (await panel.getByRole('heading', { name: heading, level: 2 }).isVisible()) ? true : undefined;
      },
      20_000,
      500,
    );
    return panel;
  };

  test('edited twice, the History lists three versions; version 1 compared with the current one says what changed; restoring it gives it back in the editor', async () => {
    const created = await api('POST', '/api/v1/workflows', {
      name: 'Onboarding',
      triggerType: 'manual',
      graph: {
        nodes: [{ id: 'task', type: 'create_task', position: { x: 260, y: 60 }, params: { title: 'Welcome call' } }],
        edges: [{ from: 'trigger', to: 'task' }],
      },
    });
    workflowId = created.id;

    // Edit 1: the step's title. Edit 2: the workflow's name and a second step after the first.
    await page.goto(`${base}/workflows/${workflowId}`);
    let panel = await selectStep('task', 'Create Task');
    await panel.getByLabel('Title').fill('Welcome call with {{trigger.name}}');
    await saveWorkflow(page);
    await page.getByRole('textbox', { name: 'Workflow name' }).fill('Onboarding v2');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'Create Task' }).click();
    await page.getByRole('complementary', { name: 'Node panel' }).getByRole('heading', { name: 'Create Task', level: 2 }).waitFor();
    await page.getByRole('complementary', { name: 'Node panel' }).getByText('task_1').waitFor();
    await page.getByRole('complementary', { name: 'Node panel' }).getByLabel('Title').fill('Send the handbook');
    await saveWorkflow(page);

    await page.getByRole('link', { name: 'History' }).click();
    await heading(page).filter({ hasText: 'History · Onboarding v2' }).waitFor();
    const rows = page.getByRole('table', { name: 'Versions' }).getByRole('row');
    await until('three versions listed', async () => ((await rows.count()) === 4 ? true : undefined)); // the header row and 3
    assert.match(await rows.nth(1).innerText(), /3\s*current/);
    assert.match(await rows.nth(1).innerText(), /You/);
    await assertAccessible(page, 'history');

    await page.getByRole('button', { name: 'Open version 1' }).click();
    const version = page.getByRole('region', { name: 'Version 1', exact: true });
    await version.getByRole('heading', { name: 'Version 1', level: 2 }).waitFor();
    const diff = page.getByTestId('version-diff');
    await diff.waitFor();
    assert.match(await diff.innerText(), /From version 1 to version 3 \(current\)/);
    assert.match(await page.getByRole('region', { name: 'Steps added' }).innerText(), /\+ Create Task \(task_1\)/);
    const changed = page.getByRole('table', { name: 'Changes of task' });
    assert.deepEqual(
      (await changed.getByRole('row').allInnerTexts()).slice(1).map((r) => r.split('\t').map((c) => c.trim())),
      [['params.title', '"Welcome call"', '"Welcome call with {{trigger.name}}"']],
    );
    assert.match(await page.getByRole('region', { name: 'Edges added' }).innerText(), /Create Task \(task\) → Create Task \(task_1\)/);
    const settings = page.getByRole('table', { name: 'Settings changed' });
    assert.match(await settings.innerText(), /Name\s+"Onboarding"\s+"Onboarding v2"/);
    assert.equal(await page.getByRole('region', { name: 'Steps removed' }).count(), 0);
    await assertAccessible(page, 'the comparison');
    await screenshot(page, 'workflow-history');

    // Compared with version 2 instead: only the new step, the edge and the name.
    await page.getByRole('combobox', { name: 'Compare with' }).selectOption('2');
    await until('compared with version 2', async () => /From version 1 to version 2/.test(await page.getByTestId('version-diff').innerText()) || undefined);
    assert.equal(await page.getByRole('table', { name: 'Changes of task' }).count(), 1);
    await page.getByRole('combobox', { name: 'Compare with' }).selectOption('3');
    await until(
      'compared with the current version',
      async () => /to version 3 \(current\)/.test(await page.getByTestId('version-diff').innerText()) || undefined,
    );
    assert.match(page.url(), /\/history\?version=1&compare=3$/);

    // Read-only: the canvas shows version 1's one step; its JSON is the definition as saved.
    await page.getByRole('tab', { name: 'Canvas' }).click();
    const canvas = page.getByRole('region', { name: 'Version canvas (read-only)' });
    await canvas.getByTestId('node-task').waitFor();
    assert.equal(await canvas.getByTestId('node-task_1').count(), 0);
    assert.equal(await canvas.locator('.react-flow__node.draggable').count(), 0, 'nothing can be dragged');
    await page.getByRole('tab', { name: 'JSON' }).click();
    const json = JSON.parse(await page.getByTestId('version-json').innerText());
    assert.equal(json.name, 'Onboarding');
    assert.equal(json.graph.nodes[0].params.title, 'Welcome call');

    // Restore: the dialog says what happens, then the editor has version 1's definition.
    await page.getByRole('button', { name: 'Restore this version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore version 1?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /saved as a new version \(version 4, “Restored version 1”\)/);
    assert.match(await dialog.innerText(), /the current version 3 stays in the history/);
    await assertAccessible(page, 'the restore dialog');
    await dialog.getByRole('button', { name: 'Restore this version' }).click();
    await page.waitForURL(`${base}/workflows/${workflowId}`);
    await page.getByText('Restored version 1 as a new version of “Onboarding”.').waitFor();
    assert.equal(await page.getByRole('textbox', { name: 'Workflow name' }).inputValue(), 'Onboarding');
    assert.equal(await page.getByTestId('node-task_1').count(), 0);
    panel = await selectStep('task', 'Create Task');
    assert.equal(await panel.getByLabel('Title').inputValue(), 'Welcome call');

    const history = await api('GET', `/api/v1/workflows/${workflowId}/versions`);
    assert.deepEqual(
      history.items.map((v: { number: number; message: string | null }) => [v.number, v.message]),
      [
        [4, 'Restored version 1'],
        [3, null],
        [2, null],
        [1, null],
      ],
    );
    const [first, restored] = await Promise.all([1, 4].map((n) => api('GET', `/api/v1/workflows/${workflowId}/versions/${n}`)));
    assert.deepEqual(restored.definition, first.definition);
    // The current version is the restored one: it cannot be restored over itself.
    await page.goto(`${base}/workflows/${workflowId}/history`);
    await page.getByRole('region', { name: 'Version 4 (current)', exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Restore this version' }).isDisabled(), true);
    assert.match(await page.getByTestId('version-diff').innerText(), /From version 3 to version 4 \(current\)/);
  });

  test('a run’s page links its version in the History', async () => {
    const started = await api('POST', `/api/v1/workflows/${workflowId}/runs`, { payload: {} });
    const run = await until('the run finished with its version', async () => {
      const r = await api('GET', `/api/v1/workflow-runs/${started.id}`);
      return ['succeeded', 'failed'].includes(r.status) && r.workflowVersion ? r : undefined;
    });
    await page.goto(`${base}/runs/${run.id}`);
    await heading(page).waitFor();
    await page.getByRole('link', { name: `version ${run.workflowVersion}` }).click();
    await page.waitForURL(`${base}/workflows/${workflowId}/history?version=${run.workflowVersion}`);
    await page.getByRole('heading', { name: new RegExp(`^Version ${run.workflowVersion}`), level: 2 }).waitFor();
  });

  test('at 390 px the History fits without sideways scrolling and passes axe-core', async () => {
    const phone = await newContext(browser, PHONE);
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      await p.goto(`${base}/workflows/${workflowId}/history?version=1`);
      await p.getByTestId('version-diff').waitFor();
      const overflow = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok(overflow <= PHONE.width, `no sideways scrolling (${overflow})`);
      const restore = (await p.getByRole('button', { name: 'Restore this version' }).boundingBox())!;
      assert.ok(restore.x >= 0 && restore.x + restore.width <= PHONE.width, `Restore is on screen: ${JSON.stringify(restore)}`);
      await assertAccessible(p, 'history at 390 px');
      await screenshot(p, 'workflow-history-phone');
    } finally {
      await phone.close();
    }
  });

  test('the Workflows list sorts by name, last updated and created (on the server)', async () => {
    for (const name of ['b second', 'A first', 'c third']) await api('POST', '/api/v1/workflows', { name, triggerType: 'manual' });
    // "A first" changed last.
    const all = (await api('GET', '/api/v1/workflows?limit=100')).items as { id: string; name: string }[];
    await api('PATCH', `/api/v1/workflows/${all.find((w) => w.name === 'A first')!.id}`, { description: 'changed' });
    await page.goto(`${base}/workflows`);
    const names = async () => page.getByRole('table', { name: 'Workflows' }).getByRole('row').locator('td:first-child').allInnerTexts();
    await until('listed', async () => ((await names()).length === 4 ? true : undefined));
    assert.deepEqual(await names(), ['c third', 'A first', 'b second', 'Onboarding'], 'newest created first');
    const sort = page.getByRole('combobox', { name: 'Sort by' });
    // Sorted by the server (GET /workflows?sort=): the list reads again.
    await sort.selectOption('name');
    await until('by name, whatever the case', async () => ((await names()).join() === 'A first,b second,c third,Onboarding' ? true : undefined));
    await sort.selectOption('updated');
    await until('last updated first', async () => ((await names())[0] === 'A first' ? true : undefined));
    await assertAccessible(page, 'sorted workflows');
  });
});
