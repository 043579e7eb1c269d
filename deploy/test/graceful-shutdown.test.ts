import pg from 'pg';
// Graceful shutdown under load, on the compiled entrypoints (workspace-api, auth, webhook-ingest,
// workflow-engine as processes; machine Postgres + embedded bus):
//  1. SIGTERM webhook-ingest in the middle of a bounded burst of concurrent webhook POSTs: it exits
//     0 within the grace period, and every delivery it acknowledged with 200 becomes exactly one run.
//  2. SIGTERM the workflow engine while runs are in flight, start it again: it exits 0 within the
//     grace period after finishing them, and every event runs exactly once — no run lost or doubled,
//     and the HTTP Request of each run reached the receiver once.
//  3. A run that cannot finish: the grace period running out, or a second SIGTERM, ends the engine
//     with exit code 1 at once (the message stays unacknowledged, for redelivery).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent } from 'undici';
import { createFirstUser, createWebhookWorkflow, startReceiver, waitForRuns, workspaceApi, type Run, type WorkspaceApi } from './support/flowdesk.ts';
import { freshDatabase, startStack, type Stack } from './support/stack.ts';

const GRACE_MS = 10_000;
const DRAIN_MS = 300;
const CONNECTIONS = 8;
const LOAD_MS = 2_000;
const SIGTERM_AT_MS = 1_000;

let database: Awaited<ReturnType<typeof freshDatabase>>;
let stack: Stack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** Answers only after a minute: a run stuck in its HTTP Request. */
let stuckReceiver: Awaited<ReturnType<typeof startReceiver>>;
let api: WorkspaceApi;

before(async () => {
  // Each run's HTTP Request takes this long at the receiver, so runs are really in flight when the
  // engine gets its signal.
  receiver = await startReceiver(150);
  stuckReceiver = await startReceiver(60_000);
  database = await freshDatabase();
  stack = await startStack(
    {
      databaseUrl: database.url,
      ssrfAllowlist: `${receiver.hostPort},${stuckReceiver.hostPort}`,
      graceMs: GRACE_MS,
      env: { 'webhook-ingest': { SHUTDOWN_DRAIN_MS: String(DRAIN_MS) }, 'workflow-engine': { ENGINE_CONCURRENCY: '8' } },
    },
    ['workspace-api', 'auth', 'webhook-ingest', 'workflow-engine'],
  );
  const { apiKey } = await createFirstUser(database.url);
  api = await workspaceApi(stack, apiKey);
});

after(async () => {
  await stack?.close();
  await receiver?.close();
  await stuckReceiver?.close();
  await database?.close();
});

/** `count` active webhook workflows built by `graph`. */
async function workflows(prefix: string, count: number, graph: unknown) {
  return Promise.all(Array.from({ length: count }, (_, i) => createWebhookWorkflow(api, `${prefix} ${i}`, graph)));
}

function assertExactlyOneRunEach(runs: Run[], acked: Set<string>) {
  const byEvent = new Map<string, Run[]>();
  for (const r of runs) byEvent.set(r.eventId, [...(byEvent.get(r.eventId) ?? []), r]);
  const lost = [...acked].filter((id) => !byEvent.has(id));
  const doubled = [...byEvent].filter(([, rs]) => rs.length > 1).map(([id]) => id);
  const unacked = [...byEvent.keys()].filter((id) => !acked.has(id));
  assert.deepEqual({ lost, doubled, unacked }, { lost: [], doubled: [], unacked: [] }, `${acked.size} acknowledged, ${runs.length} runs`);
  const notSucceeded = runs.filter((r) => r.status !== 'succeeded');
  assert.deepEqual(notSucceeded, [], 'every run succeeded');
}

test('SIGTERM to webhook-ingest under load: exits 0 within the grace period, no acknowledged webhook is lost', { timeout: 90_000 }, async (t) => {
  // Several workflows per connection: the per-workflow rate limit (burst 50) must not be what
  // answers most requests.
  const wfs = await workflows('Load', 4 * CONNECTIONS, {
    nodes: [{ id: 'check', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } }],
    edges: [{ from: 'trigger', to: 'check' }],
  });
  const ingest = stack.proc('webhook-ingest');
  const acked = new Set<string>();
  // Warm-up, one delivery per workflow: ingest's trigger lookups and its service token are cached
  // before the measured burst (these count as acknowledged deliveries like any other).
  for (const wf of wfs) {
    const res = await fetch(`${ingest.url}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.secret },
      body: JSON.stringify({ n: 'warm-up' }),
    });
    const body = (await res.json()) as { eventId: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    acked.add(body.eventId);
  }
  const dispatcher = new Agent({ connections: CONNECTIONS });
  const outcomes: Record<string, number> = {};
  let ackedAfterSignal = 0;
  let signalAt = Infinity;
  const started = Date.now();
  let n = 0;

  const stopped = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) => {
    setTimeout(() => {
      signalAt = Date.now();
      resolve(ingest.stop('SIGTERM'));
    }, SIGTERM_AT_MS);
  });

  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, worker) => {
      for (let i = 0; Date.now() - started < LOAD_MS; i++) {
        const wf = wfs[(worker * 4 + (i % 4)) % wfs.length]!;
        const sent = Date.now();
        try {
          const res = await fetch(`${ingest.url}/functions/v1/webhook-trigger/${wf.id}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.secret },
            body: JSON.stringify({ n: n++ }),
            // @ts-expect-error undici's dispatcher option of Node's fetch
            dispatcher,
          });
          const body = (await res.json().catch(() => ({}))) as { eventId?: string };
          outcomes[res.status] = (outcomes[res.status] ?? 0) + 1;
          if (res.status === 200) {
            assert.ok(body.eventId, 'a 200 names its event');
            acked.add(body.eventId);
            if (sent >= signalAt) ackedAfterSignal++;
          }
        } catch (err) {
          // After the drain the listener is gone: refused connections are not acknowledgements.
          const code = ((err as Error).cause as { code?: string } | undefined)?.code ?? 'error';
          outcomes[code] = (outcomes[code] ?? 0) + 1;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }),
  );
  await dispatcher.close();
  const exit = await stopped;
  assert.deepEqual([exit.code, exit.signal], [0, null], `webhook-ingest exit:\n${ingest.stdout.slice(-5).join('\n')}\n${ingest.stderr.join('\n')}`);
  assert.ok(exit.ms < GRACE_MS, `webhook-ingest took ${exit.ms} ms to stop (grace ${GRACE_MS})`);
  // How many get through depends on the machine; what matters is that deliveries were in flight.
  assert.ok(acked.size >= wfs.length + 10, `enough load: ${JSON.stringify(outcomes)}`);
  assert.ok(ackedAfterSignal > 0, `deliveries sent after SIGTERM, during the drain, were still served: ${JSON.stringify(outcomes)}`);

  t.diagnostic(
    `outcomes ${JSON.stringify(outcomes)}; acknowledged ${acked.size}, ${ackedAfterSignal} of them sent after SIGTERM; ingest stopped in ${exit.ms} ms`,
  );
  const ids = wfs.map((w) => w.id);
  const runs = await waitForRuns(api, ids, (done) => done.length >= acked.size, 60_000);
  assertExactlyOneRunEach(runs, acked);
});

test('SIGTERM to the workflow engine mid-processing, then a restart: no run lost or doubled', { timeout: 90_000 }, async (t) => {
  await stack.start('webhook-ingest'); // the previous test stopped it; same port, same configuration
  const PER_WORKFLOW = 6;
  const wfs = await workflows('Slow', 8, {
    nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiver.url}/slow`, body: { n: '{{trigger.n}}' } } }],
    edges: [{ from: 'trigger', to: 'notify' }],
  });
  receiver.received.length = 0;
  const acked = new Set<string>();
  await Promise.all(
    wfs.map(async (wf, w) => {
      for (let i = 0; i < PER_WORKFLOW; i++) {
        const res = await fetch(`${stack.url('webhook-ingest')}/functions/v1/webhook-trigger/${wf.id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.secret },
          body: JSON.stringify({ n: `${w}-${i}` }),
        });
        const body = (await res.json()) as { eventId: string };
        assert.equal(res.status, 200, JSON.stringify(body));
        acked.add(body.eventId);
      }
    }),
  );
  const total = wfs.length * PER_WORKFLOW;

  // Runs are under way (one per workflow at a time, 150 ms each): stop the engine now.
  const deadline = Date.now() + 30_000;
  while (receiver.received.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const engine = stack.proc('workflow-engine');
  const exit = await engine.stop('SIGTERM');
  assert.deepEqual([exit.code, exit.signal], [0, null], `workflow-engine exit:\n${engine.stdout.slice(-5).join('\n')}\n${engine.stderr.join('\n')}`);
  assert.ok(exit.ms < GRACE_MS, `workflow-engine took ${exit.ms} ms to stop (grace ${GRACE_MS})`);
  const doneAtStop = receiver.received.length;
  assert.ok(doneAtStop < total, `the engine stopped with work left (${doneAtStop} of ${total} done)`);
  t.diagnostic(`engine stopped in ${exit.ms} ms with ${doneAtStop} of ${total} runs done`);
  // The runs API is the engine's, which is down now: read its table directly (a superuser, past RLS).
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  try {
    const { rows } = await sql.query<{ id: string }>(`SELECT id FROM engine.run WHERE workflow_id = ANY($1::uuid[]) AND status = 'running'`, [
      wfs.map((w) => w.id),
    ]);
    assert.deepEqual(rows, [], 'the runs in flight at SIGTERM were finished, none left running');
  } finally {
    await sql.end();
  }

  await stack.start('workflow-engine');
  const runs = await waitForRuns(
    api,
    wfs.map((w) => w.id),
    (done) => done.length >= total,
    60_000,
  );
  assertExactlyOneRunEach(runs, acked);
  const calls = receiver.received.map((r) => String(r.body.n)).sort();
  const expected = wfs.flatMap((_, w) => Array.from({ length: PER_WORKFLOW }, (_, i) => `${w}-${i}`)).sort();
  assert.deepEqual(calls, expected, 'each run’s HTTP Request reached the receiver exactly once');
});

test('a run that does not finish: the grace period running out, or a second SIGTERM, exits 1 at once', { timeout: 60_000 }, async () => {
  // Two workflows: the first one's message stays leased by the engine that was cut off (until the
  // lease runs out), and a workflow's later events wait behind it.
  const [first, second] = await workflows('Stuck', 2, {
    nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url: `${stuckReceiver.url}/stuck`, body: {} } }],
    edges: [{ from: 'trigger', to: 'notify' }],
  });
  const runStuck = async (wf: { id: string; secret: string }) => {
    const before = stuckReceiver.arrived();
    const res = await fetch(`${stack.url('webhook-ingest')}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.secret },
      body: '{}',
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const deadline = Date.now() + 20_000;
    while (stuckReceiver.arrived() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(stuckReceiver.arrived() > before, 'the run is in its HTTP Request');
  };

  // The engine of the previous test, restarted with a short grace period.
  await stack.proc('workflow-engine').stop('SIGTERM');
  const short = await stack.start('workflow-engine', { SHUTDOWN_GRACE_MS: '1000' });
  await runStuck(first!);
  const late = await short.stop('SIGTERM');
  assert.deepEqual([late.code, late.signal], [1, null], short.stdout.slice(-5).join('\n'));
  assert.ok(late.ms >= 900 && late.ms < 5_000, `exit 1 when the grace period ran out (${late.ms} ms)`);

  const engine = await stack.start('workflow-engine');
  await runStuck(second!);
  const exit = engine.stop('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  const sent = Date.now();
  engine.child.kill('SIGTERM');
  const forced = await exit;
  assert.deepEqual([forced.code, forced.signal], [1, null], engine.stdout.slice(-5).join('\n'));
  assert.ok(forced.at - sent < 2_000, `the second SIGTERM ended it at once (${forced.at - sent} ms), not the grace period`);
});
