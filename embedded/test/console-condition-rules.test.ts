// The step forms' rows in Debian's chromium on a fresh embedded start: a Condition built with two rules
// joined by OR, a Switch with its rules as rows (one output handle per row; removing a row drops that
// row's edge and moves the later rows' edges up), saved, and runs taking the right branches. Also a
// workflow saved with the Condition's older one-comparison params opens as one rule.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { until } from '@flowdesk/service-kit/testing';
import { launch, ownerPage, saveWorkflow, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

interface Graph {
  nodes: { id: string; type: string; params: Record<string, unknown> }[];
  edges: { from: string; to: string; branch?: string }[];
}

describe('Condition and Switch rules as rows in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let page: Page;
  let base: string;
  let csrf: string;

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ page } = await ownerPage(browser, base, owner));
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    csrf = ((await (await page.request.get(`${base}/api/v1/session`)).json()) as { csrfToken: string }).csrfToken;
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const headers = () => ({ origin: base, 'x-csrf-token': csrf });
  const create = async (name: string, graph: Graph): Promise<string> => {
    const res = await page.request.post(`${base}/api/v1/workflows`, { data: { name, triggerType: 'manual', graph }, headers: headers() });
    assert.equal(res.status(), 201, await res.text());
    return ((await res.json()) as { id: string }).id;
  };
  const saved = async (id: string) => ((await (await page.request.get(`${base}/api/v1/workflows/${id}`)).json()) as { graph: Graph }).graph;
  const open = async (id: string) => {
    await page.goto(`${base}/workflows/${id}`);
    await page.getByLabel('Workflow name', { exact: true }).waitFor();
  };
  const addStep = async (kind: string, output?: string) => {
    await page.getByRole('button', { name: 'Add step' }).click();
    if (output) {
      await page.getByRole('radio', { name: output, exact: true }).click();
      await page.getByRole('radio', { name: output, exact: true, checked: true }).waitFor();
    }
    await page.getByRole('menuitem', { name: kind, exact: true }).click();
  };
  const choose = async (label: string, option: string) => {
    await page.getByRole('combobox', { name: label, exact: true }).click();
    await page.getByRole('option', { name: option, exact: true }).click();
  };
  /**
   * Runs the workflow now with `payload` and answers the ids of the steps that succeeded, in order. A
   * run that ends on a branch without an edge before any action ran is `skipped` (`ends: 'skipped'`).
   */
  const runWith = async (id: string, payload: Record<string, unknown>, ends = 'succeeded'): Promise<string[]> => {
    const res = await page.request.post(`${base}/api/v1/workflows/${id}/runs`, {
      data: { payload },
      headers: { ...headers(), 'idempotency-key': randomBytes(8).toString('hex') },
    });
    assert.ok(res.ok(), await res.text());
    const runId = ((await res.json()) as { id: string }).id;
    const run = await until(
      'the run to finish',
      async () => {
        const r = (await (await page.request.get(`${base}/api/v1/workflow-runs/${runId}`)).json()) as {
          status: string;
          steps: { nodeId: string; status: string }[];
        };
        return r.status === 'queued' || r.status === 'running' ? undefined : r;
      },
      60_000,
    );
    assert.equal(run.status, ends, JSON.stringify(run));
    return run.steps.filter((s) => s.status === 'succeeded').map((s) => s.nodeId);
  };

  test('a Condition with two rules joined by OR and a Switch with rows: saved as rules, runs take the right branch', async () => {
    const id = await create('Rules', { nodes: [], edges: [] });
    await open(id);

    // Condition: status is "paid" OR total is greater than 100.
    await addStep('Condition');
    await page.getByLabel('Rule 1 value to check', { exact: true }).fill('{{trigger.status}}');
    assert.equal(await page.getByLabel('Rule 1 compare with', { exact: true }).count(), 0, 'a new rule tests exists: nothing to compare with');
    await choose('Rule 1 operator', 'equals');
    await page.getByLabel('Rule 1 compare with', { exact: true }).fill('paid');
    assert.equal(await page.getByRole('combobox', { name: 'Combine rules with', exact: true }).count(), 0, 'one rule: nothing to combine');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Rule 2 value to check', { exact: true }).fill('{{trigger.total}}');
    await choose('Rule 2 operator', 'is greater than');
    await page.getByLabel('Rule 2 compare with', { exact: true }).fill('100');
    await choose('Combine rules with', 'OR: any rule holds');
    await page.getByTestId('node-condition_1').getByText('{{trigger.status}} equals paid OR {{trigger.total}} greater than 100').waitFor();

    // Switch on the true branch: three rows, each its own output handle.
    await addStep('Switch', 'true');
    await page.getByLabel('Value to route on').fill('{{trigger.channel}}');
    await page.getByLabel('Rule 1 compare with', { exact: true }).fill('web');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Rule 2 compare with', { exact: true }).fill('shop');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await choose('Rule 3 operator', 'exists');
    assert.equal(await page.getByLabel('Rule 3 compare with', { exact: true }).count(), 0, 'exists has no right-hand side');
    const handles = () =>
      page.locator('.react-flow__handle.source[data-nodeid="switch_1"]').evaluateAll((hs) => hs.map((h) => h.getAttribute('data-handleid')));
    await until('a handle per row', async () => ((await handles()).join() === '1,2,3,default' ? true : undefined));
    for (const output of ['1', '2', '3']) {
      await page.getByTestId('node-switch_1').click();
      await page.getByLabel('Value to route on').waitFor();
      await addStep('Set Fields', output);
      await page.getByTestId(`node-set_${output}`).waitFor();
    }

    // Removing rule 1: its edge goes, rules 2 and 3 (and their edges) move up to handles 1 and 2.
    await page.getByTestId('node-switch_1').click();
    await page.getByRole('button', { name: 'Remove rule 1' }).click();
    assert.equal(await page.getByLabel('Rule 1 compare with', { exact: true }).inputValue(), 'shop');
    await until('the handles to follow the rows', async () => ((await handles()).join() === '1,2,default' ? true : undefined));
    const switchEdges = () =>
      page.locator('.react-flow__edge').evaluateAll((es) =>
        es
          .map((e) => e.getAttribute('data-id') ?? '')
          .filter((i) => i.startsWith('switch_1->'))
          .sort(),
      );
    assert.deepEqual(await switchEdges(), ['switch_1->set_2:1', 'switch_1->set_3:2']);
    // set_1 lost its only edge: nothing reaches it, so it goes before saving (the server refuses an unreachable step).
    await page.getByTestId('node-set_1').click();
    await page.getByRole('button', { name: 'Delete step set_1' }).click();
    await saveWorkflow(page);

    const graph = await saved(id);
    const byId = (n: string) => graph.nodes.find((x) => x.id === n)!;
    assert.deepEqual(byId('condition_1').params, {
      rules: [
        { left: '{{trigger.status}}', operator: 'equals', right: 'paid' },
        { left: '{{trigger.total}}', operator: 'greater_than', right: '100' },
      ],
      combinator: 'or',
    });
    assert.deepEqual(byId('switch_1').params, { value: '{{trigger.channel}}', rules: [{ operator: 'equals', right: 'shop' }, { operator: 'exists' }] });
    assert.deepEqual(
      graph.edges.filter((e) => e.from === 'switch_1'),
      [
        { from: 'switch_1', to: 'set_2', branch: '1' },
        { from: 'switch_1', to: 'set_3', branch: '2' },
      ],
      "rule 1's edge dropped, the others moved up",
    );

    // Runs: only the second rule holds (OR), then the Switch's first row; neither rule: the false branch, nothing after.
    assert.deepEqual(await runWith(id, { status: 'pending', total: 250, channel: 'shop' }), ['condition_1', 'switch_1', 'set_2']);
    assert.deepEqual(await runWith(id, { status: 'pending', total: 250, channel: 'phone' }), ['condition_1', 'switch_1', 'set_3']);
    assert.deepEqual(await runWith(id, { status: 'pending', total: 50, channel: 'shop' }, 'skipped'), ['condition_1']);
    assert.deepEqual(
      await runWith(id, { status: 'paid', total: 50, channel: 'web' }),
      ['condition_1', 'switch_1', 'set_3'],
      'the first rule alone; web has no row now',
    );
  });

  test('a Condition saved with the older one-comparison params opens as one rule and saves as rules', async () => {
    const id = await create('Old condition', {
      nodes: [{ id: 'check', type: 'condition', params: { left: '{{trigger.coupon}}', operator: 'exists' } }],
      edges: [{ from: 'trigger', to: 'check' }],
    });
    assert.deepEqual(await runWith(id, { coupon: 'X' }), ['check'], 'runs as before');
    await open(id);
    await page.getByTestId('node-check').click();
    assert.equal(await page.getByLabel('Rule 1 value to check', { exact: true }).inputValue(), '{{trigger.coupon}}');
    assert.equal(await page.getByRole('combobox', { name: 'Rule 1 operator', exact: true }).inputValue(), 'exists');
    await page.getByLabel('Rule 1 value to check', { exact: true }).fill('{{trigger.code}}');
    await saveWorkflow(page);
    assert.deepEqual((await saved(id)).nodes[0]!.params, { rules: [{ left: '{{trigger.code}}', operator: 'exists' }], combinator: 'and' });
  });
});
