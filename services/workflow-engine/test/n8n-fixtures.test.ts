// Every n8n file of workspace-api's import fixtures (services/workspace-api/test/fixtures/n8n,
// docs/workflow-export.md, "Importing from n8n") imported through POST /workflows/import and run by a
// real engine on the same stack: each run ends as expected, and a step imported disabled never runs
// (it is recorded skipped and disabled, and the loopback receiver never gets its request). The files'
// outside hosts (api.example.com, …) point at the receiver, the one address the SSRF guard opens.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, userCaller, type EngineStack, type EngineUnderTest } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: EngineUnderTest;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl: engine.url }));
const runs = runsApi(call);

const dir = new URL('../../workspace-api/test/fixtures/n8n/', import.meta.url);
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

/**
 * How each fixture's run ends (its status, for a failed run what its error says, the steps that
 * succeeded) with the receiver's answers (below) and the fixture's pinned trigger data as the payload. A fixture added
 * to the folder without a line here fails the test.
 */
const EXPECTED: Record<string, { status: string; error?: RegExp; ran?: string[] }> = {
  // n8n's Code reads $input, which a Flowdesk Code step does not have (the import says so): it fails saying why.
  'code.json': { status: 'failed', error: /\$input' is not defined/ },
  // The disabled Audit is skipped; Result reads Create invoice's answer through it.
  'http-v1-v2.json': { status: 'succeeded', ran: ['get_order', 'create_invoice', 'result'] },
  'if-v1.json': { status: 'succeeded', ran: ['worth_a_call', 'call'] },
  'loop.json': { status: 'succeeded' },
  // Get orders → Filter → a 5-minute Wait: the run parks there.
  'more-nodes.json': { status: 'waiting', ran: ['get_orders', 'open_only'] },
  'schedule-http-set.json': { status: 'succeeded', ran: ['get_rates', 'keep_usd'] },
  'schedule-http-splitout-set.json': { status: 'succeeded' },
  'switch-merge.json': { status: 'succeeded', ran: ['by_status', 'new', 'notify'] },
  'unmappable.json': { status: 'succeeded', ran: ['log'] },
  'webhook-if-set.json': { status: 'succeeded', ran: ['is_it_big', 'small_order'] },
  'webhook-respond.json': { status: 'succeeded', ran: ['respond_to_webhook'] },
};

/** The receiver's answers, by path: lists where the fixtures loop or filter, an object with an id elsewhere. */
function answer(url: string): unknown {
  const path = url.split('?')[0]!;
  if (path === '/users')
    return [
      { id: 1, email: 'ann@example.com' },
      { id: 2, email: 'bob@example.com' },
    ];
  if (/^\/users\/\d+\/enrich$/.test(path)) return { id: Number(path.split('/')[2]), email: `user${path.split('/')[2]}@example.com`, plan: 'pro' };
  if (path === '/orders')
    return [
      { id: 1, status: 'open', code: 'E17' },
      { id: 2, status: 'closed' },
    ];
  if (path === '/api/orders/today')
    return {
      orders: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-2', qty: 1 },
      ],
    };
  return { id: 'inv-9', status: 'open', ok: true };
}

before(async () => {
  stack = await startEngineStack({ keys, receiver: (req, res) => json(res, 200, answer(req.url)) });
  engine = await startEngineOn(stack);
});
after(async () => {
  await engine?.app.close();
  await stack?.close();
});

type Step = { nodeId: string; status: string; disabled?: boolean };
type Graph = { nodes: { id: string; type: string; disabled?: boolean; params: Record<string, unknown> }[] };

describe('each n8n fixture imported and run', () => {
  test('the folder holds the fixtures this test knows', () => {
    assert.ok(fixtures.length >= 10, fixtures.join(', '));
    assert.deepEqual(
      fixtures.filter((f) => !Object.hasOwn(EXPECTED, f)),
      [],
      'each fixture has its expected outcome',
    );
  });

  for (const name of fixtures)
    test(`${name}: imported, run, ends as expected; its disabled steps do not run`, async () => {
      const owner = randomUUID();
      const text = readFileSync(new URL(name, dir), 'utf8').replace(/https?:\/\/[a-z0-9.-]+\.(?:com|org|net|io)(?=[/"?])/g, stack.receiver!.url);
      const imported = await call(owner, 'POST', '/api/v1/workflows/import', JSON.parse(text));
      assert.equal(imported.status, 201, imported.text);
      const wf = (await call(owner, 'GET', `/api/v1/workflows/${imported.body.workflow.id}`)).body as {
        id: string;
        graph: Graph;
        samplePayload: Record<string, unknown> | null;
      };
      const before = stack.receiver!.received.length;
      const started = await runs.runNow(owner, wf, wf.samplePayload ?? {});
      const run = (await settled(owner, started.id)) as { status: string; error: string | null; steps: Step[] };
      const expected = EXPECTED[name];
      assert.ok(expected, `${name} has its expected outcome in EXPECTED`);
      assert.equal(run.status, expected.status, JSON.stringify({ error: run.error, steps: run.steps.map((s) => [s.nodeId, s.status]) }));
      if (expected.error) assert.match(run.error ?? '', expected.error);
      if (expected.ran)
        assert.deepEqual(
          run.steps.filter((s) => s.status === 'succeeded').map((s) => s.nodeId),
          expected.ran,
        );
      // A disabled step is recorded skipped and disabled, never executed: no request of its reached the receiver.
      const disabled = wf.graph.nodes.filter((n) => n.disabled === true);
      for (const n of disabled) {
        const step = run.steps.find((s) => s.nodeId === n.id);
        if (step) assert.deepEqual([step.status, step.disabled], ['skipped', true], `${n.id} is disabled`);
        if (n.type === 'http_request') {
          const path = new URL(String(n.params.url).replace(/\{\{[^}]*\}\}/g, 'x')).pathname;
          assert.ok(!stack.receiver!.received.slice(before).some((r) => r.url.startsWith(path)), `the disabled ${n.id} sent nothing`);
        }
      }
    });
});

/** The run once it parked (a Wait) or finished. */
function settled(owner: string, id: string) {
  return until('the run parked or finished', async () => {
    const r = await runs.getRun(owner, id);
    return ['succeeded', 'failed', 'skipped', 'cancelled', 'waiting'].includes(r.status) ? r : undefined;
  });
}
