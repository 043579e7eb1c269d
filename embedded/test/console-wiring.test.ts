// Wiring the workflow editor in Debian's chromium on a fresh embedded start: every kind of handle
// (plain, true/false, Switch rules, For each each/done, a Wait's timeout, the error branch) connected
// by dragging, also from the target back to the source, and saved as the right edge; an edge selected
// and deleted (Delete key and its button); a step inserted between two by the edge's "+"; Add step
// asking which output; a template laid out left to right on open and by "Tidy up"; at 390 px the
// editor opens fitted without the minimap. axe-core; screenshots at 1440 and 390 px.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { until } from '@flowdesk/service-kit/testing';
import { assertAccessible, launch, ownerPage, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

interface Saved {
  graph: { nodes: { id: string; type: string; position?: { x: number; y: number } }[]; edges: { from: string; to: string; branch?: string }[] };
}
const edgeKey = (e: { from: string; to: string; branch?: string }) => `${e.from}->${e.to}${e.branch ? `:${e.branch}` : ''}`;

describe('wiring the workflow editor in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let csrf: string;

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ context, page } = await ownerPage(browser, base, owner));
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    csrf = ((await (await page.request.get(`${base}/api/v1/session`)).json()) as { csrfToken: string }).csrfToken;
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const headers = () => ({ origin: base, 'x-csrf-token': csrf });
  const saved = async (id: string) => (await (await page.request.get(`${base}/api/v1/workflows/${id}`)).json()) as Saved;
  /** A manual workflow made through the API, without positions (as a template is): the editor lays it out. */
  const create = async (name: string, graph: Saved['graph']): Promise<string> => {
    const res = await page.request.post(`${base}/api/v1/workflows`, { data: { name, triggerType: 'manual', graph }, headers: headers() });
    assert.equal(res.status(), 201, await res.text());
    return ((await res.json()) as { id: string }).id;
  };
  const open = async (id: string) => {
    await page.goto(`${base}/workflows/${id}`);
    await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
  };
  const fit = async () => {
    await page.getByRole('button', { name: 'Fit View' }).click();
    // The fit animates: wait until the viewport stops moving.
    await page.waitForFunction(
      () => {
        const t = (globalThis as any).document.querySelector('.react-flow__viewport')?.style.transform ?? '';
        const same = t === (globalThis as any).__fdLast;
        (globalThis as any).__fdLast = t;
        return same && t !== '';
      },
      undefined,
      { polling: 100 },
    );
  };
  const handle = (node: string, type: 'source' | 'target', branch?: string): Locator =>
    page.locator(`.react-flow__handle.${type}[data-nodeid="${node}"]${branch ? `[data-handleid="${branch}"]` : ''}`);
  /** A person's drag: press on one handle, move in steps, release on the other. */
  const drag = async (from: Locator, to: Locator) => {
    const a = (await from.boundingBox())!;
    const b = (await to.boundingBox())!;
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
    await page.mouse.up();
  };
  const edgeCount = () => page.locator('.react-flow__edge').count();
  const edgeIds = () => page.locator('.react-flow__edge').evaluateAll((es) => es.map((e) => e.getAttribute('data-id')).sort());
  /** Waits for the canvas to draw `n` edges; says which it has when it does not. */
  const edgesDrawn = async (n: number) => {
    try {
      await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll('.react-flow__edge').length === n, n, { timeout: 5_000 });
    } catch {
      assert.fail(`expected ${n} edges, the canvas draws ${(await edgeIds()).join(' ')}`);
    }
  };

  test('every handle kind connects by dragging (also target → source) and saves as its edge; an edge is deleted by the Delete key and by its button', async () => {
    const id = await create('Wiring', {
      nodes: [
        { id: 'condition_1', type: 'condition', params: { left: '{{trigger.ok}}', operator: 'exists' } } as never,
        {
          id: 'switch_1',
          type: 'switch',
          params: {
            value: '{{trigger.kind}}',
            rules: [
              { operator: 'equals', right: 'a' },
              { operator: 'equals', right: 'b' },
            ],
          },
        } as never,
        { id: 'wait_1', type: 'wait', params: { mode: 'resume', timeoutAmount: '1', timeoutUnit: 'days' } } as never,
        { id: 'set_1', type: 'set_fields', onError: 'branch', params: { fields: [{ name: 'a', value: '1' }] } } as never,
        { id: 'set_2', type: 'set_fields', params: { fields: [{ name: 'b', value: '2' }] } } as never,
        { id: 'loop_1', type: 'for_each', params: { items: '{{trigger.lines}}' } } as never,
        { id: 'set_3', type: 'set_fields', params: { fields: [{ name: 'c', value: '3' }] } } as never,
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'switch_1', branch: 'true' },
        { from: 'switch_1', to: 'wait_1', branch: '1' },
        { from: 'wait_1', to: 'set_1', branch: 'resumed' },
        { from: 'set_1', to: 'set_2' },
        { from: 'switch_1', to: 'loop_1', branch: 'default' },
        { from: 'loop_1', to: 'set_3', branch: 'each' },
      ],
    });
    await open(id);
    // Laid out left to right on open: each step right of the one before it.
    const xs = [];
    for (const n of ['trigger', 'condition_1', 'switch_1', 'wait_1', 'set_1', 'set_2']) xs.push((await page.getByTestId(`node-${n}`).boundingBox())!.x);
    assert.deepEqual(
      [...xs].sort((a, b) => a - b),
      xs,
      `left to right: ${xs.join(', ')}`,
    );
    await fit();
    assert.equal(await edgeCount(), 7);

    // The connection set_1 → set_2 (plain): selected by a click, deleted by the Delete key, drawn again by dragging.
    await page.locator('.react-flow__edge[data-id="set_1->set_2"]').click({ force: true });
    await page.getByRole('button', { name: 'Delete the connection between set_1 and set_2' }).waitFor();
    await page.keyboard.press('Delete');
    await edgesDrawn(6);
    await drag(handle('set_1', 'source', undefined).first(), handle('set_2', 'target'));
    // Each branch kind to set_2, one of them (the error branch, the one that drew nothing) from the target back to the source.
    await drag(handle('condition_1', 'source', 'false'), handle('set_2', 'target'));
    await drag(handle('switch_1', 'source', '2'), handle('set_2', 'target'));
    await drag(handle('loop_1', 'source', 'done'), handle('set_2', 'target'));
    await drag(handle('wait_1', 'source', 'timeout'), handle('set_2', 'target'));
    await drag(handle('set_2', 'target'), handle('set_1', 'source', 'error'));
    await edgesDrawn(12);
    await saveWorkflow(page);
    let edges = (await saved(id)).graph.edges.map(edgeKey).sort();
    assert.deepEqual(edges, [
      'condition_1->set_2:false',
      'condition_1->switch_1:true',
      'loop_1->set_2:done',
      'loop_1->set_3:each',
      'set_1->set_2',
      'set_1->set_2:error',
      'switch_1->loop_1:default',
      'switch_1->set_2:2',
      'switch_1->wait_1:1',
      'trigger->condition_1',
      'wait_1->set_1:resumed',
      'wait_1->set_2:timeout',
    ]);
    // The error edge dragged from its source too (after deleting it with its button).
    await page.locator('.react-flow__edge[data-id="set_1->set_2:error"]').click({ force: true });
    await page.getByRole('button', { name: 'Delete the connection between set_1 and set_2' }).click();
    await edgesDrawn(11);
    await drag(handle('set_1', 'source', 'error'), handle('set_2', 'target'));
    await edgesDrawn(12);
    await saveWorkflow(page);
    edges = (await saved(id)).graph.edges.map(edgeKey);
    assert.ok(edges.includes('set_1->set_2:error'), edges.join(' '));
    await assertAccessible(page, 'the wired editor');
    await screenshot(page, 'editor-wiring');
  });

  test('"+" on an edge inserts a step between; Add step asks which output and never lands on another step; Tidy up lays it out', async () => {
    const id = await create('Insert', {
      nodes: [
        { id: 'condition_1', type: 'condition', params: { left: '{{trigger.ok}}', operator: 'exists' } } as never,
        { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'a', value: '1' }] } } as never,
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'set_1', branch: 'true' },
      ],
    });
    await open(id);
    await page.getByRole('button', { name: 'Insert a step between condition_1 and set_1' }).click();
    await page.getByRole('menuitem', { name: 'Set Fields', exact: true }).click();
    await page.getByTestId('node-set_2').waitFor();
    // Add step after the Condition on its false output (chosen in the menu).
    await page.getByTestId('node-condition_1').click();
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('radio', { name: 'false' }).click();
    await page.getByRole('radio', { name: 'false', checked: true }).waitFor();
    await page.getByRole('menuitem', { name: 'Set Fields', exact: true }).click();
    await page.getByTestId('node-set_3').waitFor();
    // No two cards overlap. The boxes are read in one snapshot, once two snapshots agree: a card read
    // while the viewport still pans (a loaded machine) is elsewhere than one read a frame later.
    const snapshot = () =>
      page.evaluate(
        (ids) => {
          const doc = (globalThis as any).document;
          return ids.map((n: string) => {
            const r = doc.querySelector(`[data-testid="node-${n}"]`).getBoundingClientRect();
            return { x: r.x, y: r.y, width: r.width, height: r.height };
          });
        },
        ['trigger', 'condition_1', 'set_1', 'set_2', 'set_3'],
      ) as Promise<{ x: number; y: number; width: number; height: number }[]>;
    let last = '';
    const boxes = await until('the canvas at rest', async () => {
      const now = await snapshot();
      const same = JSON.stringify(now) === last;
      last = JSON.stringify(now);
      return same ? now : undefined;
    });
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i]!, boxes[j]!];
        assert.ok(a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y, `cards ${i} and ${j} overlap`);
      }
    await page.getByRole('button', { name: 'Tidy up' }).click();
    await saveWorkflow(page);
    const g = (await saved(id)).graph;
    assert.deepEqual(g.edges.map(edgeKey).sort(), ['condition_1->set_2:true', 'condition_1->set_3:false', 'set_2->set_1', 'trigger->condition_1']);
    const x = new Map(g.nodes.map((n) => [n.id, n.position!.x]));
    assert.ok(x.get('condition_1')! < x.get('set_2')! && x.get('set_2')! < x.get('set_1')!, 'tidied left to right');
  });

  test('a template opens laid out left to right; at 390 px the editor opens readable at the trigger, fit view shows every step, no minimap', async () => {
    await page.goto(`${base}/workflows`);
    await page.getByRole('button', { name: 'Start from a template' }).first().click();
    const gallery = page.getByRole('dialog', { name: 'Start from a template' });
    await gallery
      .getByRole('button', { name: /^Use this template: / })
      .first()
      .click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').at(-1)!;
    await page.getByTestId('node-trigger').waitFor();
    const g = (await saved(id)).graph;
    const trigger = (await page.getByTestId('node-trigger').boundingBox())!;
    for (const n of g.nodes) assert.ok((await page.getByTestId(`node-${n.id}`).boundingBox())!.x > trigger.x, `${n.id} right of the trigger`);
    await page.getByRole('region', { name: 'Workflow canvas' }).locator('.react-flow__minimap').waitFor();
    await screenshot(page, 'editor-template');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      await p.goto(`${base}/workflows/${id}`);
      await p.getByTestId('node-trigger').waitFor();
      assert.equal(await p.locator('.react-flow__minimap').count(), 0, 'no minimap at 390 px');
      const canvas = (await p.getByRole('region', { name: 'Workflow canvas' }).boundingBox())!;
      /** Waits until every card named is wholly inside the canvas, left to right. */
      const inside = async (ids: string[]) => {
        for (const n of ids) {
          await p.getByTestId(`node-${n}`).waitFor();
          await p.waitForFunction(
            ([sel, left, right]) => {
              const r = (globalThis as any).document.querySelector(sel)?.getBoundingClientRect();
              return r && r.left >= left - 1 && r.right <= right + 1;
            },
            [`[data-testid="node-${n}"]`, canvas.x, canvas.x + canvas.width] as const,
          );
        }
      };
      // Opens at the start of the flow, readable: the trigger's card on screen at zoom ≥ 0.8.
      await inside(['trigger']);
      const zoom = async () =>
        Number(/scale\(([\d.]+)\)/.exec(await p.locator('.react-flow__viewport').evaluate((el: any) => el.style.transform as string))![1]);
      assert.ok((await zoom()) >= 0.8, `opening zoom ${await zoom()}`);
      // React Flow's "Fit View" button shows the whole graph.
      await p.getByRole('button', { name: 'Fit View' }).click();
      await inside(['trigger', ...g.nodes.map((n) => n.id)]);
      await assertAccessible(p, 'the editor at 390 px');
      await screenshot(p, 'editor-phone');
    } finally {
      await phone.close();
    }
  });
});
