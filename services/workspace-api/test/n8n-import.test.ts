// Importing a workflow exported from n8n (docs/workflow-export.md, "Importing from n8n"): n8n's
// "Download" files, written by hand after n8n's export format (test/fixtures/n8n), sent unchanged to
// POST /workflows/import over real HTTP. Each gives the expected graph and problems; a hostile n8n
// file is refused with its reason and nothing is created. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { WORKFLOW_IMPORT_MAX_BYTES } from '@flowdesk/contracts';
import { scheduleCron } from '../src/domain/n8n-import.ts';
import { show, startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/n8n/${name}.json`, import.meta.url), 'utf8')) as Record<string, any>;

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.close());

const listNames = async (u: TestUser) => ((await u.call('GET', '/api/v1/workflows?limit=100')).body.items as { name: string }[]).map((w) => w.name).sort();

/** Imports an n8n file as a new user; answers the import and the workflow as GET /workflows/:id shows it. */
async function importN8n(file: unknown) {
  const user = api.user();
  const res = await user.call('POST', '/api/v1/workflows/import', file);
  assert.equal(res.status, 201, show(res));
  const workflow = (await user.call('GET', `/api/v1/workflows/${res.body.workflow.id}`)).body;
  const versions = (await user.call('GET', `/api/v1/workflows/${res.body.workflow.id}/versions`)).body;
  return { res: res.body, workflow, versions, problems: res.body.problems as { nodeId: string | null; kind: string; message: string }[] };
}
const about = (problems: { nodeId: string | null; kind: string; message: string }[], nodeId: string | null) => problems.filter((p) => p.nodeId === nodeId);

describe('importing from n8n', () => {
  test('Webhook → If → Set: an inactive webhook workflow, the If as a Condition with its rules, expressions rewritten, the No Op joined over', async () => {
    const { res, workflow, versions, problems } = await importN8n(fixture('webhook-if-set'));
    assert.equal(workflow.name, 'Big orders');
    assert.equal(workflow.active, false);
    assert.equal(workflow.triggerType, 'webhook');
    assert.deepEqual(workflow.triggerConfig, { responseMode: 'immediately' });
    assert.ok(res.workflow.webhookSecret, 'a webhook trigger gets its own secret');
    assert.equal(versions.items[0].message, 'Imported from n8n');
    assert.deepEqual(workflow.graph, {
      triggerPosition: { x: 240, y: 300 },
      nodes: [
        {
          id: 'is_it_big',
          type: 'condition',
          name: 'Is it big?',
          position: { x: 460, y: 300 },
          params: {
            rules: [
              { left: '{{trigger.amount}}', operator: 'greater_than', right: '100' },
              { left: '{{trigger.customer.email}}', operator: 'exists' },
            ],
            combinator: 'and',
          },
        },
        {
          id: 'big_order',
          type: 'set_fields',
          name: 'Big order',
          position: { x: 700, y: 200 },
          params: {
            fields: [
              // $json after the If is the If's input (the webhook's); $('Webhook') names it.
              { name: 'orderId', value: '{{trigger.id}}' },
              { name: 'customer', value: '{{trigger.customer.name}}' },
              { name: 'label', value: 'big' },
            ],
          },
        },
        {
          id: 'small_order',
          type: 'set_fields',
          name: 'Small order',
          position: { x: 920, y: 400 },
          params: { fields: [{ name: 'orderId', value: '{{trigger.id}}' }] },
        },
      ],
      edges: [
        { from: 'trigger', to: 'is_it_big' },
        { from: 'is_it_big', to: 'big_order', branch: 'true' },
        { from: 'is_it_big', to: 'small_order', branch: 'false' },
      ],
    });
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        [null, 'needs_attention'],
        ['no_operation_do_nothing', 'left_out'],
        ['sticky_note', 'left_out'],
      ],
    );
    assert.match(about(problems, null)[0]!.message, /webhook "Webhook" \(POST orders\).*own URL/);
    assert.match(about(problems, 'no_operation_do_nothing')[0]!.message, /No Op: left out, what fed it now feeds what followed it/);
  });

  test('Schedule → HTTP Request → Set: the interval as a cron in the file’s time zone, query and headers, retry; an expression with no equivalent kept and listed', async () => {
    const { workflow, problems } = await importN8n(fixture('schedule-http-set'));
    assert.equal(workflow.triggerType, 'schedule');
    assert.deepEqual(workflow.triggerConfig, { cron: '15 */2 * * *', timezone: 'Europe/Berlin' });
    assert.deepEqual(workflow.graph.nodes, [
      {
        id: 'get_rates',
        type: 'http_request',
        name: 'Get rates',
        position: { x: 220, y: 0 },
        params: { method: 'GET', url: 'https://api.example.com/rates?base=EUR', headers: { Accept: 'application/json' }, timeoutMs: 10_000 },
        retry: { attempts: 4, backoff: 'fixed', delayMs: 2000 },
      },
      {
        id: 'keep_usd',
        type: 'set_fields',
        name: 'Keep USD',
        position: { x: 440, y: 0 },
        // n8n's HTTP Request outputs the answer's body; Flowdesk's has it under `body`.
        params: {
          fields: [
            { name: 'usd', value: '{{nodes.get_rates.body.rates.USD}}' },
            { name: 'fetchedAt', value: '{{ $now.toISO() }}' },
          ],
        },
      },
    ]);
    assert.deepEqual(workflow.graph.edges, [
      { from: 'trigger', to: 'get_rates' },
      { from: 'get_rates', to: 'keep_usd' },
    ]);
    assert.deepEqual(problems, [
      { nodeId: 'keep_usd', kind: 'needs_attention', message: '"Keep USD": n8n expressions kept as text (no Flowdesk equivalent found): {{ $now.toISO() }}' },
    ]);
  });

  test('Webhook → Respond to Webhook: the trigger answers from the Respond node, with the status and the JSON body rewritten', async () => {
    const { workflow } = await importN8n(fixture('webhook-respond'));
    assert.deepEqual(workflow.triggerConfig, { responseMode: 'respond_node' });
    assert.deepEqual(workflow.graph.nodes, [
      {
        id: 'respond_to_webhook',
        type: 'respond',
        name: 'Respond to Webhook',
        position: { x: 220, y: 0 },
        params: { status: 202, body: { received: '{{trigger.id}}', ok: true } },
      },
    ]);
  });

  test('a Code node is kept with its code, flagged: n8n’s $input and $json are not in scope', async () => {
    const { workflow, problems } = await importN8n(fixture('code'));
    assert.equal(workflow.triggerType, 'manual');
    assert.equal(workflow.graph.nodes[0].type, 'code');
    assert.match(workflow.graph.nodes[0].params.code, /\$input\.all\(\)/);
    assert.deepEqual(workflow.graph.nodes[1].params, { method: 'POST', url: 'https://api.example.com/totals', body: { total: '{{nodes.sum_prices.total}}' } });
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [['sum_prices', 'needs_attention']],
    );
    assert.match(problems[0]!.message, /`\$input`, `\$json`.*do not exist here/);
  });

  test('a node with no equivalent (Google Sheets) is left out with the steps reached only through it, listed; the rest is created', async () => {
    const { workflow, problems } = await importN8n(fixture('unmappable'));
    assert.deepEqual(
      workflow.graph.nodes.map((n: { id: string }) => n.id),
      ['log'],
    );
    assert.deepEqual(workflow.graph.edges, [{ from: 'trigger', to: 'log' }]);
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        [null, 'needs_attention'],
        ['log', 'needs_attention'],
        [null, 'needs_attention'],
        ['google_sheets', 'left_out'],
        ['row', 'left_out'],
      ],
    );
    // The credential of a node left out is reported too: the user rebuilding it needs it.
    assert.equal(
      about(problems, null)[1]!.message,
      'the n8n credential "Google Sheets account" (googleSheetsOAuth2Api), used by "Google Sheets" (google_sheets): its secret is not in n8n\'s file; create a Flowdesk credential (Settings → Credentials) and choose it on the step',
    );
    assert.match(about(problems, 'google_sheets')[0]!.message, /"Google Sheets" \(n8n-nodes-base\.googleSheets\).*no Flowdesk equivalent: left out/);
    assert.match(about(problems, 'row')[0]!.message, /reached only through a step left out/);
    assert.match(about(problems, 'log')[0]!.message, /kept as text.*\{\{ \$json\.query\.q \}\}/);
    assert.match(about(problems, null)[0]!.message, /takes POST, not GET/);
  });

  test('Filter, Wait, Execute Workflow, Stop and Error, a disabled node imported disabled, an If with no equivalent operator, the error workflow', async () => {
    const { workflow, problems } = await importN8n(fixture('more-nodes'));
    assert.equal(workflow.triggerType, 'manual');
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(Object.keys(byId), ['get_orders', 'open_only', 'pause', 'old_step', 'archive', 'done']);
    // The disabled node: its own step, disabled (the engine skips it and passes its input on, as n8n did).
    assert.deepEqual(byId.old_step, {
      id: 'old_step',
      type: 'set_fields',
      name: 'Old step',
      position: { x: 800, y: 0 },
      disabled: true,
      params: { fields: [{ name: 'old', value: 'yes' }] },
    });
    assert.equal(byId.get_orders.onError, 'continue', 'n8n’s "continue (regular output)"');
    assert.deepEqual(byId.open_only.params, {
      items: '{{nodes.get_orders.body}}',
      rules: [{ field: 'status', operator: 'equals', right: 'open' }],
      combinator: 'and',
    });
    assert.deepEqual(byId.pause.params, { mode: 'duration', amount: '5', unit: 'minutes' });
    assert.deepEqual(byId.archive.params, { workflowId: '42', wait: true });
    assert.deepEqual(byId.done.params, { status: 'failed', message: 'Archived' });
    assert.deepEqual(
      new Set(workflow.graph.edges),
      new Set([
        { from: 'trigger', to: 'get_orders' },
        { from: 'get_orders', to: 'open_only' },
        { from: 'open_only', to: 'pause' },
        // A Wait goes on by its `resumed` branch; the disabled node keeps its edges.
        { from: 'pause', to: 'old_step', branch: 'resumed' },
        { from: 'old_step', to: 'archive' },
        { from: 'archive', to: 'done' },
      ]),
    );
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        ['open_only', 'needs_attention'],
        ['old_step', 'needs_attention'],
        ['archive', 'needs_attention'],
        [null, 'left_out'],
        ['is_an_error_code', 'left_out'],
        ['fail', 'left_out'],
      ],
    );
    assert.match(about(problems, 'old_step')[0]!.message, /"Old step": it was disabled in n8n: imported disabled \(runs skip it and pass its input on\)/);
    assert.match(about(problems, 'archive')[0]!.message, /n8n workflow "42": choose the Flowdesk workflow/);
    assert.match(about(problems, 'is_an_error_code')[0]!.message, /comparison "regex" has no Flowdesk equivalent: left out/);
    assert.match(about(problems, null)[0]!.message, /error workflow \(17\)/);
  });

  test('HTTP Request 1 and 2: method, URL with its query rows, headers as rows or JSON, a JSON body as rows or text, timeout; a disabled one imported disabled; a file download left out', async () => {
    const { workflow, problems } = await importN8n(fixture('http-v1-v2'));
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(Object.keys(byId), ['get_order', 'create_invoice', 'audit', 'result']);
    assert.deepEqual(workflow.tags, ['billing', 'old-nodes'], 'n8n’s tags, spaces as -');
    assert.deepEqual(byId.get_order.params, {
      method: 'GET',
      url: 'https://api.example.com/orders/{{trigger.orderId}}?expand=lines',
      headers: { Accept: 'application/json' },
      timeoutMs: 5000,
    });
    assert.deepEqual(byId.create_invoice.params, {
      method: 'POST',
      url: 'https://api.example.com/invoices',
      headers: { 'X-Source': 'n8n' },
      // $json after an HTTP Request is its answer: Flowdesk's has it under body.
      body: { order: '{{nodes.get_order.body.id}}', source: 'n8n' },
    });
    assert.equal(byId.audit.disabled, true);
    assert.deepEqual(byId.audit.params, { method: 'POST', url: 'https://api.example.com/audit', body: { note: 'never sent' } });
    // $json after the disabled Audit is what reached it: Create invoice's answer.
    assert.deepEqual(byId.result.params, { fields: [{ name: 'invoice', value: '{{nodes.create_invoice.body.id}}' }] });
    assert.equal(byId.result.disabled, undefined);
    assert.match(about(problems, 'create_invoice')[0]!.message, /n8n credential "Billing key": set its Credential/);
    assert.match(about(problems, 'audit')[0]!.message, /imported disabled/);
    assert.match(about(problems, 'download_report')[0]!.message, /downloads the answer as a file .*: left out/);
  });

  test('a disabled node of no Flowdesk equivalent is a disabled placeholder with its edges; the steps after it are kept', async () => {
    const file = fixture('http-v1-v2');
    const audit = file.nodes.find((n: { name: string }) => n.name === 'Audit');
    Object.assign(audit, { type: 'n8n-nodes-base.googleSheets', typeVersion: 4, parameters: { operation: 'append' } });
    const { workflow, problems } = await importN8n(file);
    const placeholder = workflow.graph.nodes.find((n: { id: string }) => n.id === 'audit');
    assert.deepEqual(placeholder, {
      id: 'audit',
      type: 'set_fields',
      name: 'Audit (disabled in n8n)',
      position: { x: 600, y: 0 },
      disabled: true,
      params: { fields: [] },
    });
    assert.ok(
      workflow.graph.nodes.some((n: { id: string }) => n.id === 'result'),
      'the step after it is kept',
    );
    assert.match(
      about(problems, 'audit')[0]!.message,
      /disabled in n8n \(n8n-nodes-base\.googleSheets\) and .*no Flowdesk equivalent: kept as a disabled, empty Set Fields step/,
    );
  });

  test('Switch 3 (rules) → Flowdesk Switch branches with the fallback as default; a Merge (append) joined over; pinned data; a credential by name and type', async () => {
    const { workflow, problems } = await importN8n(fixture('switch-merge'));
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(Object.keys(byId), ['by_status', 'new', 'paid', 'unknown_status', 'notify']);
    // One value (the rules' left side, rewritten), one comparison per rule.
    assert.deepEqual(byId.by_status.params, {
      value: '{{trigger.status}}',
      rules: [
        { operator: 'equals', right: 'new' },
        { operator: 'starts_with', right: 'paid' },
      ],
    });
    assert.deepEqual(byId.notify.params, { method: 'POST', url: 'https://hooks.example.com/orders', body: { text: '{{nodes.new.label}}' } });
    assert.deepEqual(workflow.graph.edges, [
      { from: 'trigger', to: 'by_status' },
      { from: 'by_status', to: 'new', branch: '1' },
      { from: 'by_status', to: 'paid', branch: '2' },
      // The extra fallback output → default.
      { from: 'by_status', to: 'unknown_status', branch: 'default' },
      // The Merge joined over: Notify waits for both branches into it (an OR-join).
      { from: 'new', to: 'notify' },
      { from: 'paid', to: 'notify' },
    ]);
    // The webhook's pinned item: its body is the sample; another node's pinned data is listed as not kept.
    assert.deepEqual(workflow.samplePayload, { id: 'A-17', status: 'new' });
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        [null, 'needs_attention'],
        ['merge', 'left_out'],
        ['notify', 'needs_attention'],
        [null, 'needs_attention'],
        ['new', 'left_out'],
        [null, 'needs_attention'],
      ],
    );
    assert.match(about(problems, 'merge')[0]!.message, /"Merge" is a Merge \(append\): left out.*run once, when every branch into it is done/);
    assert.match(about(problems, 'new')[0]!.message, /the 1 item pinned on "New" in n8n: not kept/);
    assert.match(about(problems, null)[1]!.message, /the 1 item pinned on "Webhook" in n8n: it is the workflow's sample trigger data \(its body\)/);
    assert.equal(
      about(problems, null)[2]!.message,
      'the n8n credential "Orders hook key" (httpHeaderAuth), used by "Notify" (notify): its secret is not in n8n\'s file; create a Flowdesk credential of type "API key in a header" (Settings → Credentials) and choose it on the step',
    );
  });

  test('Switch: a fallback to a rule’s output is that output and default; expression mode, all matching outputs, two values, a rule of two conditions are listed', async () => {
    const file = fixture('switch-merge');
    const sw = file.nodes[1];
    const withSwitch = (parameters: Record<string, unknown>) => ({
      ...file,
      pinData: {},
      nodes: file.nodes.map((n: { name: string }) => (n === sw ? { ...sw, parameters } : n)),
    });
    const toFirst = await importN8n(withSwitch({ ...sw.parameters, options: { fallbackOutput: 0 } }));
    assert.deepEqual(
      toFirst.workflow.graph.edges.filter((e: { from: string }) => e.from === 'by_status'),
      [
        { from: 'by_status', to: 'new', branch: '1' },
        { from: 'by_status', to: 'new', branch: 'default' },
        { from: 'by_status', to: 'paid', branch: '2' },
      ],
    );
    assert.match(about(toFirst.problems, 'unknown_status')[0]!.message, /output 3 of "By status" is not one Flowdesk has/);
    const rule = (left: string, right: string) => ({
      conditions: { conditions: [{ leftValue: left, rightValue: right, operator: { type: 'string', operation: 'equals' } }], combinator: 'and' },
    });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['expression mode', { mode: 'expression', numberOutputs: 3, output: '={{ $json.body.priority }}' }, /expression mode.*rebuild it with rules/],
      ['all matching outputs', { ...sw.parameters, options: { allMatchingOutputs: true } }, /every output whose rule matches/],
      ['two values', { rules: { values: [rule('={{ $json.body.status }}', 'new'), rule('={{ $json.body.kind }}', 'paid')] } }, /compare different values/],
      [
        'a rule of two conditions',
        { rules: { values: [{ conditions: { conditions: [rule('a', 'b').conditions.conditions[0], rule('c', 'd').conditions.conditions[0]] } }] } },
        /rule 1 has 2 conditions/,
      ],
    ];
    for (const [what, parameters, reason] of cases) {
      const { workflow, problems } = await importN8n(withSwitch(parameters));
      assert.deepEqual(workflow.graph.nodes, [], what);
      assert.match(about(problems, 'by_status')[0]!.message, reason, what);
      assert.equal(about(problems, 'by_status')[0]!.kind, 'left_out', what);
    }
  });

  test('Switch 1 and 2: one value1, rules of { operation, value2 } to their outputs, fallbackOutput by number', async () => {
    const file = fixture('switch-merge');
    const sw = file.nodes[1];
    const withSwitch = (typeVersion: number, parameters: Record<string, unknown>) => ({
      ...file,
      pinData: {},
      nodes: file.nodes.map((n: { name: string }) => (n === sw ? { ...sw, typeVersion, parameters } : n)),
    });
    const base = { dataType: 'string', value1: '={{ $json.body.status }}' };
    // Switch 2 (its rules' outputs are their own), the n8n shape of its test workflows: the fallback to output 2.
    const v2 = await importN8n(
      withSwitch(2, {
        ...base,
        rules: {
          rules: [
            { value2: 'new', outputKey: 'New' },
            { operation: 'startsWith', value2: 'paid' },
          ],
        },
        fallbackOutput: 1,
      }),
    );
    assert.deepEqual(v2.workflow.graph.nodes[0].params, {
      value: '{{trigger.status}}',
      rules: [
        { operator: 'equals', right: 'new' },
        { operator: 'starts_with', right: 'paid' },
      ],
    });
    assert.deepEqual(
      v2.workflow.graph.edges.filter((e: { from: string }) => e.from === 'by_status'),
      [
        { from: 'by_status', to: 'new', branch: '1' },
        { from: 'by_status', to: 'paid', branch: '2' },
        { from: 'by_status', to: 'paid', branch: 'default' },
      ],
    );
    // Switch 1: two rules to output 0, one to output 1, the fallback to output 2.
    const v1 = await importN8n(
      withSwitch(1, {
        ...base,
        rules: {
          rules: [
            { value2: 'new', output: 0 },
            { value2: 'open', output: 0 },
            { operation: 'contains', value2: 'paid', output: 1 },
          ],
        },
        fallbackOutput: 2,
      }),
    );
    assert.deepEqual(
      v1.workflow.graph.edges.filter((e: { from: string }) => e.from === 'by_status'),
      [
        { from: 'by_status', to: 'new', branch: '1' },
        { from: 'by_status', to: 'new', branch: '2' },
        { from: 'by_status', to: 'paid', branch: '3' },
        { from: 'by_status', to: 'unknown_status', branch: 'default' },
      ],
    );
    const regex = await importN8n(withSwitch(2, { ...base, rules: { rules: [{ operation: 'regex', value2: '^n' }] } }));
    assert.match(about(regex.problems, 'by_status')[0]!.message, /rule 1: its string comparison "regex" has no Flowdesk equivalent: left out/);
  });

  test('If 1 (boolean, number, string lists and combineOperation) → Condition rules; its regex is listed; a Set 2; the manual trigger’s pinned item is the sample', async () => {
    const { workflow, problems } = await importN8n(fixture('if-v1'));
    assert.deepEqual(workflow.graph.nodes[0].params, {
      // n8n checks the boolean, then the number, then the string conditions; `any` is OR.
      rules: [
        { left: '{{trigger.paid}}', operator: 'equals', right: 'true' },
        { left: '{{trigger.amount}}', operator: 'greater_than', right: '100' },
        { left: '{{trigger.tier}}', operator: 'contains', right: 'vip' },
        { left: '{{trigger.note}}', operator: 'is_empty' },
      ],
      combinator: 'or',
    });
    assert.deepEqual(workflow.graph.nodes[1].params, {
      fields: [
        { name: 'action', value: 'call' },
        { name: 'amount', value: '{{trigger.amount}}' },
      ],
    });
    assert.deepEqual(workflow.graph.edges, [
      { from: 'trigger', to: 'worth_a_call' },
      { from: 'worth_a_call', to: 'call', branch: 'true' },
    ]);
    assert.deepEqual(workflow.samplePayload, { paid: false, amount: 120, tier: 'gold', note: '' });
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        ['call', 'needs_attention'],
        [null, 'needs_attention'],
        ['ours', 'left_out'],
      ],
    );
    assert.match(about(problems, 'ours')[0]!.message, /"Ours\?" \(n8n-nodes-base\.if\): its string comparison "regex" has no Flowdesk equivalent: left out/);
  });

  test('Loop Over Items → For each (its loop → each, done → done, the edge back recognised); the Aggregate after it reads the results', async () => {
    const { workflow, problems } = await importN8n(fixture('loop'));
    assert.deepEqual(workflow.triggerConfig, { cron: '0 */6 * * *' });
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(byId.loop_over_items.params, { items: '{{nodes.get_users.body}}', concurrency: '1' });
    // Inside the loop $json of the loop is the current item; after it, the Aggregate collects the results of its last step.
    assert.deepEqual(byId.enrich.params, { method: 'POST', url: 'https://api.example.com/users/{{item.id}}/enrich' });
    assert.deepEqual(byId.shape.params.fields, [
      { name: 'email', value: '{{nodes.enrich.body.email}}' },
      { name: 'name', value: '{{item.name}}' },
    ]);
    assert.deepEqual(byId.collect_emails.params, { items: '{{nodes.loop_over_items.results}}', field: 'email', into: 'list' });
    assert.deepEqual(byId.send_digest.params.body, { first: '{{nodes.collect_emails.items.0}}' });
    // The edge from Shape back into the loop is gone (a For each loops by itself): no cycle.
    assert.deepEqual(workflow.graph.edges, [
      { from: 'trigger', to: 'get_users' },
      { from: 'get_users', to: 'loop_over_items' },
      { from: 'loop_over_items', to: 'collect_emails', branch: 'done' },
      { from: 'loop_over_items', to: 'enrich', branch: 'each' },
      { from: 'enrich', to: 'shape' },
      { from: 'collect_emails', to: 'send_digest' },
    ]);
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        ['loop_over_items', 'needs_attention'],
        ['enrich', 'needs_attention'],
        [null, 'needs_attention'],
      ],
    );
    assert.match(about(problems, null)[0]!.message, /"Enrichment token" \(httpBearerAuth\), used by "Enrich" \(enrich\).*of type "Bearer token"/);
  });

  test('Schedule → HTTP Request → Split Out → Set → Aggregate → HTTP Request: the Split Out a For each, the Set its loop, the Aggregate on done', async () => {
    const { workflow, problems } = await importN8n(fixture('schedule-http-splitout-set'));
    assert.deepEqual(workflow.triggerConfig, { cron: '0 7 * * *', timezone: 'America/New_York' });
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(byId.split_out.params, { items: '{{nodes.get_orders.body.orders}}', concurrency: '1' });
    assert.deepEqual(byId.line.params.fields, [
      { name: 'sku', value: '{{item.sku}}' },
      { name: 'quantity', value: '{{item.qty}}' },
    ]);
    assert.deepEqual(byId.all_skus.params, { items: '{{nodes.split_out.results}}', field: 'sku', into: 'list' });
    // The Aggregate's renamed output field is its list.
    assert.deepEqual(byId.reserve_stock.params.body, { skus: '{{nodes.all_skus.items}}' });
    assert.deepEqual(workflow.graph.edges, [
      { from: 'trigger', to: 'get_orders' },
      { from: 'get_orders', to: 'split_out' },
      { from: 'split_out', to: 'line', branch: 'each' },
      { from: 'all_skus', to: 'reserve_stock' },
      { from: 'split_out', to: 'all_skus', branch: 'done' },
    ]);
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [['split_out', 'needs_attention']],
    );
    assert.match(problems[0]!.message, /once per element of "orders": they are the For each's loop/);
  });

  test('a loop a For each cannot be (a Wait in it) is left out with the reason, its loop with it; the rest is created', async () => {
    const file = fixture('loop');
    const wait = {
      parameters: { amount: 2, unit: 'seconds' },
      id: 'w',
      name: 'Slow down',
      type: 'n8n-nodes-base.wait',
      typeVersion: 1.1,
      position: [770, 100],
    };
    file.nodes.push(wait);
    file.connections.Enrich = { main: [[{ node: 'Slow down', type: 'main', index: 0 }]] };
    file.connections['Slow down'] = { main: [[{ node: 'Shape', type: 'main', index: 0 }]] };
    const { workflow, problems } = await importN8n(file);
    assert.deepEqual(
      workflow.graph.nodes.map((n: { id: string }) => n.id),
      ['get_users'],
    );
    assert.match(
      about(problems, 'loop_over_items')[0]!.message,
      /"Loop Over Items" \(a loop, as a For each\): node "slow_down" waits \(a Wait\) inside the loop/,
    );
    for (const id of ['enrich', 'shape', 'collect_emails', 'send_digest', 'slow_down']) assert.equal(about(problems, id)[0]?.kind, 'left_out', id);
  });

  test('Limit, Sort, Remove Duplicates, Date & Time, a Merge that combines, Split in Batches 1: each left out with what to use instead', async () => {
    const node = (name: string, type: string, parameters: Record<string, unknown>, typeVersion = 1) => ({
      id: name,
      name,
      type: `n8n-nodes-base.${type}`,
      typeVersion,
      position: [200, 0],
      parameters,
    });
    const nodes = [
      node('Start', 'manualTrigger', {}),
      node('Split', 'splitOut', { fieldToSplitOut: 'lines', options: {} }),
      node('First 5', 'limit', { maxItems: 5 }),
      node('Sort', 'sort', { sortFieldsUi: { sortField: [{ fieldName: 'name' }] }, options: {} }, 1),
      node('Dedupe', 'removeDuplicates', {}, 2),
      node('Format date', 'dateTime', { operation: 'formatDate', date: '={{ $json.at }}' }, 2),
      node('Combine', 'merge', { mode: 'combine', combineBy: 'combineByPosition', options: {} }, 3),
      node('Batches', 'splitInBatches', { batchSize: 10, options: {} }, 1),
    ];
    const { workflow, problems } = await importN8n({
      name: 'No steps for these',
      nodes,
      connections: { Start: { main: [nodes.slice(1).map((n) => ({ node: n.name, type: 'main', index: 0 }))] } },
    });
    // Split Out of the trigger's list is a For each with nothing in its loop.
    assert.deepEqual(
      workflow.graph.nodes.map((n: { id: string; params: unknown }) => [n.id, n.params]),
      [['split', { items: '{{trigger.lines}}', concurrency: '1' }]],
    );
    const reasons = Object.fromEntries(problems.filter((p) => p.kind === 'left_out').map((p) => [p.nodeId, p.message]));
    assert.match(reasons.first_5, /no Limit step: a Code step can keep the first 5/);
    assert.match(reasons.sort, /no Sort step/);
    assert.match(reasons.dedupe, /no Remove Duplicates step/);
    assert.match(reasons.format_date, /no Date & Time step/);
    assert.match(reasons.combine, /combines its inputs’ items \(combine, combineByPosition\)/);
    assert.match(reasons.batches, /Split in Batches before version 3.*rebuild the loop as a For each/);
  });

  test('an Error Trigger becomes the error trigger; without a trigger the nodes nothing feeds start a manual run, said', async () => {
    const stop = (name: string, x: number) => ({
      name,
      type: 'n8n-nodes-base.stopAndError',
      typeVersion: 1,
      position: [x, 0],
      parameters: { errorMessage: name },
    });
    const onError = await importN8n({
      name: 'On error',
      nodes: [{ name: 'Error Trigger', type: 'n8n-nodes-base.errorTrigger', typeVersion: 1, position: [0, 0], parameters: {} }, stop('Alert', 200)],
      connections: { 'Error Trigger': { main: [[{ node: 'Alert', type: 'main', index: 0 }]] } },
    });
    assert.equal(onError.workflow.triggerType, 'error');
    assert.deepEqual(onError.workflow.graph.edges, [{ from: 'trigger', to: 'alert' }]);
    const none = await importN8n({ name: 'No trigger', nodes: [stop('First', 0)], connections: {} });
    assert.equal(none.workflow.triggerType, 'manual');
    assert.deepEqual(none.workflow.graph.edges, [{ from: 'trigger', to: 'first' }]);
    assert.match(about(none.problems, null)[0]!.message, /no trigger: the new one starts by hand/);
  });

  test('an expression of many {{ and no }} is read in linear time, kept as the text it is', async () => {
    const file = fixture('webhook-respond');
    file.nodes[1].parameters = { respondWith: 'text', responseBody: `=${'{{'.repeat(200_000)}` };
    const { workflow, problems } = await importN8n(file);
    assert.equal(workflow.graph.nodes[0].params.body, '{{'.repeat(200_000));
    assert.deepEqual(about(problems, 'respond_to_webhook'), [], 'no expression in it');
  });

  test('names of Object.prototype in an n8n file are names, not lookups: each such node is left out with its reason', async () => {
    const node = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      id: name,
      name,
      type: `n8n-nodes-base.${type}`,
      typeVersion,
      position: [200, 0],
      parameters,
      ...extra,
    });
    const nodes = [
      node('Start', 'manualTrigger', 1, {}),
      node('If two', 'if', 2, { conditions: { conditions: [{ leftValue: 'a', rightValue: 'b', operator: { type: 'string', operation: 'constructor' } }] } }),
      node('If one', 'if', 1, { conditions: { string: [{ value1: 'a', operation: 'toString', value2: 'b' }] } }),
      node('Switch one', 'switch', 2, { dataType: 'constructor', value1: 'a', rules: { rules: [{ value2: 'b' }] } }),
      node('Lists', 'itemLists', 3, { operation: 'constructor' }),
      node('Call', 'httpRequest', 4.2, { url: 'https://api.example.com/' }, { credentials: { constructor: { name: '__proto__' } } }),
    ];
    const { workflow, problems } = await importN8n({
      name: 'Prototype names',
      nodes,
      connections: { Start: { main: [nodes.slice(1).map((n) => ({ node: n.name, type: 'main', index: 0 }))] } },
    });
    assert.deepEqual(
      workflow.graph.nodes.map((n: { id: string }) => n.id),
      ['call'],
    );
    const reasons = Object.fromEntries(problems.filter((p) => p.kind === 'left_out').map((p) => [p.nodeId, p.message]));
    assert.match(reasons.if_two, /comparison "constructor" has no Flowdesk equivalent/);
    assert.match(reasons.if_one, /comparison "toString" has no Flowdesk equivalent/);
    assert.match(reasons.switch_one, /compares constructor values/);
    assert.match(reasons.lists, /operation "constructor" has no Flowdesk equivalent/);
    assert.match(
      about(problems, null)[0]!.message,
      /the n8n credential "__proto__" \(constructor\), used by "Call" \(call\).*create a Flowdesk credential \(Settings/,
    );
  });

  test('a hostile n8n file is refused with its reason, and nothing is created', async () => {
    const u = api.user();
    const good = fixture('webhook-if-set');
    const node = (i: number) => ({ id: `n${i}`, name: `Node ${i}`, type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [i, 0], parameters: {} });
    const cases: [string, unknown, RegExp][] = [
      ['500 nodes', { ...good, nodes: Array.from({ length: 500 }, (_, i) => node(i)) }, /n8n file cannot be imported: nodes .*100/],
      [
        'a cycle in its connections',
        {
          ...good,
          connections: { ...good.connections, 'Big order': { main: [[{ node: 'Is it big?', type: 'main', index: 0 }]] } },
        },
        /cycle/,
      ],
      [
        'a connection to a node it does not have',
        { ...good, connections: { Webhook: { main: [[{ node: 'Ghost', type: 'main', index: 0 }]] } } },
        /"Ghost", which the file does not have/,
      ],
      ['two nodes of one name', { ...good, nodes: [...good.nodes, good.nodes[1]] }, /two nodes are named "Is it big\?"/],
      ['a node without a type', { ...good, nodes: [{ name: 'x' }] }, /nodes\.0/],
      ['pinned data that is not a list of items', { ...good, pinData: { Webhook: { json: {} } } }, /pinData\.Webhook/],
    ];
    for (const [what, body, reason] of cases) {
      const res = await u.call('POST', '/api/v1/workflows/import', body);
      assert.equal(res.status, 400, `${what}: ${show(res)}`);
      assert.equal(res.body.error, 'validation_failed', what);
      assert.match(res.body.message, reason, what);
    }
    // Prototype pollution, as text: refused by the JSON parser.
    const proto = await u.call('POST', '/api/v1/workflows/import', JSON.stringify(good).replace('"parameters":{', '"parameters":{"__proto__":{"admin":true},'));
    assert.equal(proto.status, 400, show(proto));
    // Larger than the import's limit: 413.
    const big = await u.call('POST', '/api/v1/workflows/import', { ...good, nodes: [{ ...good.nodes[0], notes: 'x'.repeat(WORKFLOW_IMPORT_MAX_BYTES) }] });
    assert.equal(big.status, 413, show(big));
    assert.deepEqual(await listNames(u), [], 'nothing was created');
  });
});

describe('n8n Schedule Trigger rules as cron', () => {
  test('a cron expression (seconds 0 dropped) or a simple interval becomes a five-field cron; anything else is said', () => {
    const rule = (interval: Record<string, unknown>[]) => scheduleCron({ rule: { interval } });
    assert.deepEqual(rule([{ field: 'cronExpression', expression: '0 9 * * 1-5' }]), { cron: '0 9 * * 1-5' });
    assert.deepEqual(rule([{ field: 'cronExpression', expression: '0 30 9 * * *' }]), { cron: '30 9 * * *' });
    assert.match(rule([{ field: 'cronExpression', expression: '*/10 * * * * *' }]).problem!, /seconds/);
    assert.deepEqual(rule([{ field: 'minutes', minutesInterval: 15 }]), { cron: '*/15 * * * *' });
    assert.deepEqual(rule([{}]), { cron: '0 0 * * *' }, 'n8n’s default: every day at midnight');
    assert.deepEqual(rule([{ field: 'days', daysInterval: 1, triggerAtHour: 8, triggerAtMinute: 30 }]), { cron: '30 8 * * *' });
    assert.deepEqual(rule([{ field: 'weeks', weeksInterval: 1, triggerAtDay: [1, 3], triggerAtHour: 9 }]), { cron: '0 9 * * 1,3' });
    assert.match(rule([{ field: 'weeks', weeksInterval: 2 }]).problem!, /every 2 weeks/);
    assert.match(rule([{ field: 'seconds', secondsInterval: 30 }]).problem!, /shorter than a minute/);
    assert.deepEqual(rule([{ field: 'hours', hoursInterval: 1 }, { field: 'minutes' }]), {
      cron: '0 * * * *',
      problem: 'only the first of its 2 rules was taken',
    });
  });
});
