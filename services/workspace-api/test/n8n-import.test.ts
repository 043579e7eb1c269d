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
        ['google_sheets', 'left_out'],
        ['row', 'left_out'],
      ],
    );
    assert.match(about(problems, 'google_sheets')[0]!.message, /"Google Sheets" \(n8n-nodes-base\.googleSheets\).*no Flowdesk equivalent: left out/);
    assert.match(about(problems, 'row')[0]!.message, /reached only through a step left out/);
    assert.match(about(problems, 'log')[0]!.message, /kept as text.*\{\{ \$json\.query\.q \}\}/);
    assert.match(about(problems, null)[0]!.message, /takes POST, not GET/);
  });

  test('Filter, Wait, Execute Workflow, Stop and Error, a disabled node, an If with no equivalent operator, the error workflow', async () => {
    const { workflow, problems } = await importN8n(fixture('more-nodes'));
    assert.equal(workflow.triggerType, 'manual');
    const byId = Object.fromEntries(workflow.graph.nodes.map((n: { id: string }) => [n.id, n]));
    assert.deepEqual(Object.keys(byId), ['get_orders', 'open_only', 'pause', 'archive', 'done']);
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
        // The disabled node between them is joined over; a Wait goes on by its `resumed` branch.
        { from: 'pause', to: 'archive', branch: 'resumed' },
        { from: 'archive', to: 'done' },
      ]),
    );
    assert.deepEqual(
      problems.map((p) => [p.nodeId, p.kind]),
      [
        ['old_step', 'left_out'],
        ['open_only', 'needs_attention'],
        ['archive', 'needs_attention'],
        [null, 'left_out'],
        ['is_an_error_code', 'left_out'],
        ['fail', 'left_out'],
      ],
    );
    assert.match(about(problems, 'old_step')[0]!.message, /disabled in n8n/);
    assert.match(about(problems, 'archive')[0]!.message, /n8n workflow "42": choose the Flowdesk workflow/);
    assert.match(about(problems, 'is_an_error_code')[0]!.message, /comparison "regex" has no Flowdesk equivalent: left out/);
    assert.match(about(problems, null)[0]!.message, /error workflow \(17\)/);
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
