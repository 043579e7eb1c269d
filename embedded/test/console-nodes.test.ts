// Every node type's form, Run this step and the template gallery, in Debian's chromium on a fresh
// embedded start. The form test walks the node registry (NODE_TYPES, formFields): a node type added to
// the registry is covered without editing this file — it is added from the add-step menu, its form shows
// every field formFields() lists (those not hidden by their hint), the required ones are filled (with the
// hint's placeholder, an example the definition gives), saved, and kept after a reload. axe-core on the
// editor and the gallery, the gallery also at 390 px. Screenshots with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { formFields, NODE_TYPES, WORKFLOW_TEMPLATES, type AnyNodeDefinition, type FormField } from '@flowdesk/contracts';
import { assertAccessible, launch, ownerPage, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { until } from '@flowdesk/service-kit/testing';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

/**
 * Values for required fields whose placeholder is no valid value (keyed `<type>.<param>`). Empty
 * today: every required field's placeholder is an example that saves. Add one here only when a new
 * node's placeholder cannot be one.
 */
const FILL: Record<string, string> = {};

/** The form a newly added step starts with (web/src/workflows/graph.ts emptyForm). */
function startingForm(fields: FormField[]): Record<string, unknown> {
  const form: Record<string, unknown> = {};
  const selectDefault = (f: FormField) => (typeof f.hint.default === 'string' ? f.hint.default : f.options![0]!.value);
  for (const f of fields) {
    if (f.widget === 'none' || f.widget === 'switch') continue;
    form[f.key] =
      f.widget === 'key-value'
        ? []
        : f.widget === 'rows'
          ? f.required
            ? [Object.fromEntries(f.columns!.map((c) => [c.key, c.widget === 'select' ? selectDefault(c) : '']))]
            : []
          : f.widget === 'select'
            ? selectDefault(f)
            : '';
  }
  return form;
}
/** The label of a column's input in row `i` (1-based) of a `rows` field (StepForm's RowsWidget). */
const cellLabel = (f: FormField, i: number, column: FormField) => `${capital(f.hint.noun ?? 'row')} ${i} ${column.hint.label.toLowerCase()}`;
/** The text columns of a row shown for a new row (selects at their default). */
const textColumns = (f: FormField, row: Record<string, string>) => f.columns!.filter((c) => c.widget === 'text' && !c.hint.hiddenWhen?.(row as never));

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** A field by its label, which Mantine ends with " *" when the field is required. */
const labelled = (box: Locator, label: string) => box.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));

describe('node forms, Run this step and the template gallery in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let csrf: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: { method: string; url: string; body: string }[] = [];

  before(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ticket: 'T-7' }));
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    receiverUrl = `http://127.0.0.1:${port}/hooks/crm`;
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${port}` });
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
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  const apiGet = async (path: string) => (await page.request.get(`${base}/api/v1${path}`)).json();
  /** A manual-trigger workflow made through the API (the list's own flows are the editor suite's). */
  const newWorkflow = async (name: string): Promise<string> => {
    const res = await page.request.post(`${base}/api/v1/workflows`, {
      data: { name, triggerType: 'manual' },
      headers: { origin: base, 'x-csrf-token': csrf },
    });
    assert.equal(res.status(), 201, await res.text());
    return ((await res.json()) as { id: string }).id;
  };
  const openEditor = async (id: string) => {
    await page.goto(`${base}/workflows/${id}`);
    await page.getByRole('textbox', { name: 'Workflow name' }).waitFor();
  };
  const panel = () => page.getByRole('complementary', { name: 'Node panel' });
  const addStep = async (label: string) => {
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: label, exact: true }).click();
  };

  /** The value a required field gets, and how to read it back. */
  const fillValue = (d: AnyNodeDefinition, f: FormField) => FILL[`${d.type}.${f.key}`] ?? f.hint.placeholder ?? `Test ${f.hint.label}`;

  for (const definition of NODE_TYPES as readonly AnyNodeDefinition[]) {
    test(`${definition.label} (${definition.type}): added from the menu, every field of its form shown, required ones filled, saved, kept after a reload`, async () => {
      const id = await newWorkflow(`Form: ${definition.label}`);
      await openEditor(id);
      await addStep(definition.label);
      const nodeId = `${definition.idPrefix}_1`;
      await page.getByTestId(`node-${nodeId}`).waitFor();
      const box = panel();
      await box.getByRole('heading', { name: definition.label, level: 2 }).waitFor();

      const fields = formFields(definition);
      const form = startingForm(fields);
      const shown = fields.filter((f) => f.widget !== 'none' && !f.hint.hiddenWhen?.(form as never));
      for (const f of shown) {
        const found =
          f.widget === 'key-value' || f.widget === 'rows'
            ? box.getByText(f.hint.label, { exact: true })
            : f.widget === 'switch'
              ? box.getByRole('switch', { name: f.hint.label })
              : labelled(box, f.hint.label);
        assert.ok((await found.count()) >= 1, `${definition.type}: the field "${f.hint.label}" (${f.key}) is on the form`);
      }
      // Fill the required ones.
      const filled: { field: FormField; value: string }[] = [];
      for (const f of shown.filter((x) => x.required)) {
        if (f.widget === 'select' || f.widget === 'project') continue; // a select starts with its default
        if (f.widget === 'workflow') {
          // One of the user's workflows, by name: this one (a workflow may run itself, depth-bounded).
          await labelled(box, f.hint.label).click();
          await page.getByRole('option', { name: `Form: ${definition.label}`, exact: true }).click();
          filled.push({ field: f, value: `Form: ${definition.label}` });
          continue;
        }
        const value = fillValue(definition, f);
        if (f.widget === 'rows') {
          // A new step starts with one row: its text cells filled (with the column's placeholder, an example).
          for (const c of textColumns(f, (form[f.key] as Record<string, string>[])[0]!))
            await box.getByLabel(cellLabel(f, 1, c), { exact: true }).fill(c.hint.placeholder ?? `Test ${c.hint.label}`);
        } else if (f.widget === 'key-value') {
          const noun = f.hint.noun ?? 'row';
          await box.getByRole('button', { name: `Add ${noun}` }).click();
          await box.getByLabel(`${capital(noun)} 1 name`, { exact: true }).fill('field_1');
          await box.getByLabel(`${capital(noun)} 1 value`, { exact: true }).fill('value 1');
        } else {
          await labelled(box, f.hint.label).fill(value);
        }
        filled.push({ field: f, value });
      }
      await box.getByLabel('Step name', { exact: true }).fill(`My ${definition.label}`);
      await saveWorkflow(page);
      const saved = (await apiGet(`/workflows/${id}`)) as { graph: { nodes: { id: string; type: string; name?: string }[] } };
      assert.deepEqual(
        saved.graph.nodes.map((n) => [n.id, n.type, n.name]),
        [[nodeId, definition.type, `My ${definition.label}`]],
      );

      await page.reload();
      await page.getByTestId(`node-${nodeId}`).click();
      await box.getByRole('heading', { name: definition.label, level: 2 }).waitFor();
      assert.equal(await box.getByLabel('Step name', { exact: true }).inputValue(), `My ${definition.label}`);
      for (const { field, value } of filled) {
        if (field.widget === 'rows') {
          for (const c of textColumns(field, (form[field.key] as Record<string, string>[])[0]!))
            assert.equal(
              await box.getByLabel(cellLabel(field, 1, c), { exact: true }).inputValue(),
              c.hint.placeholder ?? `Test ${c.hint.label}`,
              `${field.key} kept`,
            );
        } else if (field.widget === 'key-value') {
          const noun = capital(field.hint.noun ?? 'row');
          assert.equal(await box.getByLabel(`${noun} 1 name`, { exact: true }).inputValue(), 'field_1');
          assert.equal(await box.getByLabel(`${noun} 1 value`, { exact: true }).inputValue(), 'value 1');
        } else if (field.widget === 'json') {
          assert.deepEqual(JSON.parse(await labelled(box, field.hint.label).inputValue()), JSON.parse(value), `${field.key} kept`);
        } else {
          assert.equal(await labelled(box, field.hint.label).inputValue(), value, `${field.key} kept`);
        }
      }
      if (definition === NODE_TYPES[0]) await assertAccessible(page, `the ${definition.label} form`);
    });
  }

  test('Run this step: a pure step runs at once and shows its input and output; one that acts asks first, then acts for real; no run is recorded', async () => {
    const id = await newWorkflow('Try a step');
    await openEditor(id);
    await addStep('Set Fields');
    const box = panel();
    await box.getByRole('button', { name: 'Add field' }).click();
    await box.getByLabel('Field 1 name', { exact: true }).fill('greeting');
    await box.getByLabel('Field 1 value', { exact: true }).fill('{{trigger.message}} and {{= $uppercase(trigger.message) }}');
    await box.getByRole('button', { name: 'Run this step' }).click();
    const result = box.getByTestId('run-step-result');
    await result.waitFor();
    assert.match(await result.innerText(), /succeeded/i);
    // The manual trigger's sample is its documented example ({ message: "Hello" }).
    assert.deepEqual(JSON.parse(await box.getByTestId('run-step-output').innerText()), { greeting: 'Hello and HELLO' });
    await assertAccessible(page, 'the editor with a step’s result');
    await screenshot(page, 'run-this-step');

    // An HTTP POST acts: a confirmation first; Cancel sends nothing.
    await page.getByTestId('node-set_1').click();
    await addStep('HTTP Request');
    await labelled(box, 'URL').fill(receiverUrl);
    await labelled(box, 'Body (JSON)').fill('{ "said": "{{nodes.set_1.greeting}}" }');
    await box.getByRole('button', { name: 'Run this step' }).click();
    const confirm = page.getByRole('dialog', { name: 'Run this step for real?' });
    await confirm.getByText('It sends the POST request for real.').waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal(received.length, 0, 'cancelled: nothing sent');
    await box.getByRole('button', { name: 'Run this step' }).click();
    await confirm.getByRole('button', { name: 'Run it' }).click();
    await box.getByTestId('run-step-result').waitFor();
    assert.equal(received.length, 1);
    // The earlier step's output is not in a last run (there is none): the variable renders empty, said as a warning.
    assert.equal(received[0]!.method, 'POST');
    const output = JSON.parse(await box.getByTestId('run-step-output').innerText()) as { status: number; body: unknown };
    assert.equal(output.status, 201);
    assert.deepEqual(output.body, { ticket: 'T-7' });
    assert.equal(((await apiGet(`/workflows/${id}/runs`)) as { items: unknown[] }).items.length, 0, 'a tested step is no run');
    // Nothing was saved either: the workflow is still empty on the server.
    assert.equal(((await apiGet(`/workflows/${id}`)) as { graph: { nodes: unknown[] } }).graph.nodes.length, 0);
  });

  test('the template gallery: every template listed, accessible (also at 390 px); one chosen opens the editor with its graph, and its step runs on the template’s sample', async () => {
    await page.goto(`${base}/workflows`);
    // From the new-workflow dialog too.
    await page.getByRole('button', { name: 'New workflow' }).first().click();
    await page.getByRole('dialog', { name: 'New workflow' }).getByRole('button', { name: 'Or start from a template' }).click();
    await page.getByRole('dialog', { name: 'New workflow' }).waitFor({ state: 'detached' });
    const gallery = page.getByRole('dialog', { name: 'Start from a template' });
    await gallery.getByTestId('template-gallery').waitFor();
    assert.ok(WORKFLOW_TEMPLATES.length >= 8);
    assert.equal(await gallery.getByRole('button', { name: /^Use this template: / }).count(), WORKFLOW_TEMPLATES.length);
    for (const t of WORKFLOW_TEMPLATES) await gallery.getByRole('heading', { name: t.name, level: 3 }).waitFor();
    await assertAccessible(page, 'the template gallery');
    await screenshot(page, 'template-gallery');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      await phone.addCookies(await context.cookies(base));
      const p = await phone.newPage();
      await p.goto(`${base}/workflows`);
      await p.getByRole('button', { name: 'Start from a template' }).first().click();
      const g = p.getByRole('dialog', { name: 'Start from a template' });
      const use = g.getByRole('button', { name: `Use this template: ${WORKFLOW_TEMPLATES[0]!.name}` });
      await use.waitFor();
      const width = await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      assert.ok(width <= 390, `no sideways scrolling at 390 px (${width})`);
      const b = (await use.boundingBox())!;
      assert.ok(b.x >= 0 && b.x + b.width <= 390, 'the button fits the screen');
      await assertAccessible(p, 'the template gallery (phone)');
    } finally {
      await phone.close();
    }

    const template = WORKFLOW_TEMPLATES.find((t) => t.id === 'github-issue-to-task')!;
    await gallery.getByRole('button', { name: `Use this template: ${template.name}` }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').at(-1)!;
    assert.equal(await page.getByRole('textbox', { name: 'Workflow name' }).inputValue(), template.name);
    for (const n of template.graph.nodes) await page.getByTestId(`node-${n.id}`).waitFor();
    const wf = (await apiGet(`/workflows/${id}`)) as {
      active: boolean;
      triggerType: string;
      graph: { nodes: { id: string; type: string }[]; edges: unknown[] };
    };
    assert.equal(wf.active, false, 'created inactive');
    assert.equal(wf.triggerType, template.triggerType);
    assert.deepEqual(
      wf.graph.nodes.map((n) => [n.id, n.type]),
      template.graph.nodes.map((n) => [n.id, n.type]),
    );
    assert.deepEqual(wf.graph.edges, template.graph.edges);

    // No delivery yet: Run this step uses the template's sample; Create Task asks, then creates the task.
    await page.getByTestId('node-task_1').click();
    const box = panel();
    // The variables preview against the template's sample as well.
    assert.equal(await box.getByTestId('preview-text').first().innerText(), 'acme/app#42: Login button does nothing');
    await box.getByRole('button', { name: 'Run this step' }).click();
    await page.getByRole('dialog', { name: 'Run this step for real?' }).getByRole('button', { name: 'Run it' }).click();
    await box.getByTestId('run-step-result').waitFor();
    const task = JSON.parse(await box.getByTestId('run-step-output').innerText()) as { title: string };
    assert.equal(task.title, 'acme/app#42: Login button does nothing');
    await until('the task in the workspace', async () => {
      const tasks = (await apiGet('/tasks?limit=100')) as { items: { title: string }[] };
      return tasks.items.some((t) => t.title === task.title) ? true : undefined;
    });
  });
});
