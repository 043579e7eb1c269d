// Workflow files in Debian's chromium on a fresh embedded start (docs/workflow-export.md): a workflow
// is exported from the workflows list (a download), and imported back by pasting the file into the
// Import dialog; the new workflow is listed, inactive, and the dialog lists per step what needs a
// look (a credential this account does not have). A run's page links the workflow version it ran
// (its History, docs/workflow-versions.md). The list's search and filters. axe-core on the dialog and the filtered list.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, saveWorkflow, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { apiCall, heading, newContext, person, setUpOwner, until } from './support/console-session.ts';

const owner = person('Grace Hopper');

describe('workflow export and import in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const api = (method: string, path: string, body?: unknown) => apiCall(context.request, base, method, path, body);
  /** The file the first test downloaded. */
  let exported: Record<string, unknown>;

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

  test('Export downloads the file; pasting it into Import creates the new, inactive workflow and lists what needs a look', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Lead to CRM',
      triggerType: 'webhook',
      graph: {
        nodes: [
          { id: 'task', type: 'create_task', position: { x: 240, y: 60 }, params: { title: 'Call {{trigger.body.name}}' } },
          {
            id: 'crm',
            type: 'http_request',
            position: { x: 480, y: 60 },
            params: { method: 'POST', url: 'https://crm.example.com/leads', headers: { authorization: 'Bearer {{credentials.crm_token}}' } },
          },
        ],
        edges: [
          { from: 'trigger', to: 'task' },
          { from: 'task', to: 'crm' },
        ],
      },
    });
    await page.goto(`${base}/workflows`);
    await page.getByRole('button', { name: 'Actions for Lead to CRM' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Export' }).click()]);
    assert.equal(download.suggestedFilename(), 'Lead-to-CRM.flowdesk.json');
    const text = await readFile(await download.path(), 'utf8');
    const file = JSON.parse(text);
    exported = file;
    assert.equal(file.format, 'flowdesk.workflow');
    assert.deepEqual(file.credentials, [{ name: 'crm_token', nodeIds: ['crm'] }]);

    await page.getByRole('button', { name: 'Import' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Import a workflow' });
    await dialog.waitFor();
    await dialog.getByLabel('Workflow file (JSON)').fill(text);
    await assertAccessible(page, 'import dialog');
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    await dialog.getByText('Imported “Lead to CRM” as a new workflow.').waitFor();
    const problems = dialog.getByRole('list', { name: 'Import problems' }).getByRole('listitem');
    assert.equal(await problems.count(), 1);
    assert.match(await problems.first().innerText(), /step "crm" uses the credential "crm_token", which you do not have/);
    await assertAccessible(page, 'import result');

    // The list shows both, the new one inactive.
    await dialog.getByRole('button', { name: 'Done' }).click();
    await until('the imported workflow listed', async () => (await page.getByRole('link', { name: 'Lead to CRM' }).count()) === 2);
    const all = (await api('GET', '/api/v1/workflows?limit=100')).items as { id: string; name: string; active: boolean; graph: unknown }[];
    const copy = all.find((w) => w.id !== wf.id && w.name === 'Lead to CRM')!;
    assert.equal(copy.active, false);
    assert.deepEqual(copy.graph, wf.graph);
    assert.equal(await page.getByRole('switch', { name: 'Active: Lead to CRM' }).nth(1).isChecked(), false);
  });

  test('a malformed file pasted into Import is refused with the reason, and nothing is created', async () => {
    const before = (await api('GET', '/api/v1/workflows?limit=100')).items.length;
    await page.goto(`${base}/workflows`);
    await page.getByRole('button', { name: 'Import' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Import a workflow' });
    await dialog.getByLabel('Workflow file (JSON)').fill(JSON.stringify({ ...exported, formatVersion: 9 }));
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    await dialog.getByRole('alert').filter({ hasText: 'formatVersion 9 is not one this server reads (it reads 1)' }).waitFor();
    assert.equal((await api('GET', '/api/v1/workflows?limit=100')).items.length, before);
  });

  test('a workflow downloaded from n8n, pasted into Import unchanged, becomes a new inactive workflow with what was not taken listed', async () => {
    const text = await readFile(new URL('../../services/workspace-api/test/fixtures/n8n/webhook-if-set.json', import.meta.url), 'utf8');
    await page.goto(`${base}/workflows`);
    await page.getByRole('button', { name: 'Import' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Import a workflow' });
    await dialog.getByLabel('Workflow file (JSON)').fill(text);
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    await dialog.getByText('Imported “Big orders” as a new workflow.').waitFor();
    const problems = await dialog.getByRole('list', { name: 'Import problems' }).getByRole('listitem').allInnerTexts();
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.ok(
      problems.some((p) => /No Op: left out/.test(p)),
      problems.join('\n'),
    );
    const copy = (
      (await api('GET', '/api/v1/workflows?limit=100')).items as { id: string; name: string; active: boolean; graph: { nodes: { type: string }[] } }[]
    ).find((w) => w.name === 'Big orders')!;
    assert.equal(copy.active, false);
    assert.deepEqual(
      copy.graph.nodes.map((n) => n.type),
      ['condition', 'set_fields', 'set_fields'],
    );
    await api('DELETE', `/api/v1/workflows/${copy.id}`); // the list's filters below count the workflows
  });

  test('a run’s page links the workflow version it ran', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Versioned',
      triggerType: 'manual',
      graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'One' } }], edges: [{ from: 'trigger', to: 'task' }] },
    });
    await api('PATCH', `/api/v1/workflows/${wf.id}`, {
      graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'Two' } }], edges: [{ from: 'trigger', to: 'task' }] },
    });
    // The engine learns of the save through the bus: run until a run ran version 2.
    const run = await until('a run of version 2', async () => {
      const started = await api('POST', `/api/v1/workflows/${wf.id}/runs`, { payload: {} });
      const done = await until('the run finished', async () => {
        const r = await api('GET', `/api/v1/workflow-runs/${started.id}`);
        return ['succeeded', 'failed'].includes(r.status) ? r : undefined;
      });
      return done.workflowVersion === 2 ? done : undefined;
    });
    await page.goto(`${base}/runs/${run.id}`);
    await heading(page).waitFor();
    const link = page.getByRole('link', { name: 'version 2' });
    // The workflow's History opened at that version (console-history.test.ts follows the link).
    assert.equal(await link.getAttribute('href'), `/workflows/${wf.id}/history?version=2`);
    const version = await api('GET', `/api/v1/workflows/${wf.id}/versions/2`);
    assert.equal(version.definition.graph.nodes[0].params.title, 'Two');
  });

  test('Disable on a step greys its card and saves it disabled: a run skips it and the step after it runs with its input; Enable runs it again', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'Halt then file',
      triggerType: 'manual',
      graph: {
        nodes: [
          { id: 'halt', type: 'stop', position: { x: 240, y: 60 }, params: { status: 'failed', message: 'halted' } },
          { id: 'file', type: 'create_task', position: { x: 480, y: 60 }, params: { title: 'Filed {{nodes.halt.ref}}' } },
        ],
        edges: [
          { from: 'trigger', to: 'halt' },
          { from: 'halt', to: 'file' },
        ],
      },
    });
    const runOnce = async (ref: string) => {
      const started = await api('POST', `/api/v1/workflows/${wf.id}/runs`, { payload: { ref } });
      return until('the run finished', async () => {
        const r = await api('GET', `/api/v1/workflow-runs/${started.id}`);
        return ['succeeded', 'failed'].includes(r.status) ? r : undefined;
      });
    };
    await page.goto(`${base}/workflows/${wf.id}`);
    const card = page.getByTestId('node-halt');
    await card.click();
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    assert.equal(await card.getAttribute('data-disabled'), 'true');
    await page.getByTestId('panel-disabled').waitFor();
    await assertAccessible(page, 'a disabled step');
    await saveWorkflow(page);
    assert.equal((await api('GET', `/api/v1/workflows/${wf.id}`)).graph.nodes[0].disabled, true);
    // The engine learns of the save through the bus: run until a run ran the saved version.
    const skipped = await until('a run of the disabled step', async () => {
      const r = await runOnce('A-1');
      return r.status === 'succeeded' ? r : undefined;
    });
    const steps = skipped.steps as { nodeId: string; status: string; disabled?: boolean; output: unknown }[];
    assert.deepEqual(
      steps.map((s) => [s.nodeId, s.status, s.disabled ?? false]),
      [
        ['halt', 'skipped', true],
        ['file', 'succeeded', false],
      ],
    );
    assert.equal((steps[1]!.output as { title: string }).title, 'Filed A-1');

    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    assert.equal(await card.getAttribute('data-disabled'), 'false');
    await saveWorkflow(page);
    assert.equal((await api('GET', `/api/v1/workflows/${wf.id}`)).graph.nodes[0].disabled, undefined);
    const halted = await until('a run of the enabled step', async () => {
      const r = await runOnce('A-2');
      return r.status === 'failed' ? r : undefined;
    });
    assert.match(halted.error, /halted/);
    await api('DELETE', `/api/v1/workflows/${wf.id}`); // the list's filters below count the workflows
  });

  test('the Workflows list searches name and description and filters by trigger and state', async () => {
    await api('POST', '/api/v1/workflows', { name: 'Invoice reminder', description: 'Mails the overdue invoices', triggerType: 'manual', active: true });
    await page.goto(`${base}/workflows`);
    const table = page.getByRole('table', { name: 'Workflows' });
    const names = async () => (await table.getByRole('link').allInnerTexts()).sort();
    await until('every workflow listed', async () => (await names()).includes('Invoice reminder') || undefined);
    const everything = await names();
    assert.ok(everything.length >= 4, JSON.stringify(everything));
    const search = page.getByRole('textbox', { name: 'Search workflows' });
    // By the description, whatever the case.
    await search.fill('OVERDUE');
    await until('the search applied', async () => (await names()).join() === 'Invoice reminder' || undefined);
    await assertAccessible(page, 'filtered workflows');
    await search.fill('');
    await page.getByRole('combobox', { name: 'Trigger' }).selectOption('webhook');
    await until('webhook workflows only', async () => (await names()).join() === 'Lead to CRM,Lead to CRM' || undefined);
    await page.getByRole('combobox', { name: 'Trigger' }).selectOption('');
    await page.getByRole('combobox', { name: 'Active' }).selectOption('active');
    await until('active workflows only', async () => (await names()).join() === 'Invoice reminder' || undefined);
    // Nothing matches: the list says so and clears its filters, rather than "No workflows yet".
    await search.fill('no such workflow');
    await page.getByText('No workflow matches').waitFor();
    assert.equal(await page.getByText('No workflows yet').count(), 0);
    await page.getByRole('button', { name: 'Clear the filters' }).click();
    await until('the whole list back', async () => (await names()).join() === everything.join() || undefined);
    assert.equal(await search.inputValue(), '');
  });
  test('tags: chips on the rows filter the list by tag (server-side), Edit tags saves them, the server sorts by name', async () => {
    await api('POST', '/api/v1/workflows', { name: 'alpha tagged', triggerType: 'manual', tags: ['billing'] });
    await api('POST', '/api/v1/workflows', { name: 'Yak shaving', triggerType: 'manual', tags: ['ops'] });
    await page.goto(`${base}/workflows`);
    const table = page.getByRole('table', { name: 'Workflows' });
    const names = async () => await table.getByRole('link').allInnerTexts();
    await until('the tagged workflows listed', async () => ((await names()).includes('alpha tagged') ? true : undefined));
    await page.getByRole('button', { name: 'Filter by tag billing' }).click();
    await until('only the billing workflow', async () => ((await names()).join() === 'alpha tagged' ? true : undefined));
    await page.getByText('Tag: billing').waitFor();
    await assertAccessible(page, 'filtered by a tag');
    await page.getByRole('button', { name: 'Stop filtering by tag billing' }).click();
    await until('the whole list again', async () => ((await names()).includes('Yak shaving') ? true : undefined));

    // Edit tags from the row's menu: saved on the workflow, shown as chips.
    await page.getByRole('button', { name: 'Actions for Yak shaving' }).click();
    await page.getByRole('menuitem', { name: 'Edit tags' }).click();
    const dialog = page.getByRole('dialog', { name: 'Tags of “Yak shaving”' });
    await dialog.getByLabel('Tags').fill('ops, billing nightly');
    await page.getByRole('menu').waitFor({ state: 'detached' }); // the row's menu closes with a transition
    await assertAccessible(page, 'tag editor');
    await dialog.getByRole('button', { name: 'Save tags' }).click();
    await dialog.waitFor({ state: 'detached' });
    const yak = ((await api('GET', '/api/v1/workflows?q=Yak')).items as { tags: string[] }[])[0]!;
    assert.deepEqual(yak.tags, ['ops', 'billing', 'nightly']);
    await page.getByRole('button', { name: 'Filter by tag billing' }).first().click();
    await until('both billing workflows, newest first', async () => ((await names()).join() === 'Yak shaving,alpha tagged' ? true : undefined));
    // Sorted by name on the server: case does not matter.
    await page.getByRole('combobox', { name: 'Sort by' }).selectOption('name');
    await until('by name', async () => ((await names()).join() === 'alpha tagged,Yak shaving' ? true : undefined));
  });
});
