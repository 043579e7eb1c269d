// The database's connections cut under load (pg_terminate_backend of every backend of Flowdesk's
// database, as a failover or a pooler restart does), five times: the process stays up, webhooks are
// still accepted (a delivery refused meanwhile is the sender's to retry), the runs API answers again,
// and the bus recovers, so every accepted event gets its run. The load holds pooled clients across
// statements (the runs API reads in a db.transaction, as the owner), which is where a cut crashed
// the process before: a checked-out client had no error listener. The stack (workspace-api, webhook-ingest, the engine, the
// embedded bus on one Postgres database) runs in a child process (helpers/stack-process.ts), so a
// crash is seen as its exit. Postgres only: PGlite has no connections to cut.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';
import { generateSigningKeys, signInternalToken } from '@flowdesk/service-kit';
import { createWebhookWorkflow, send, stackDatabase, startStack, until, untilSucceeded } from './helpers/stack.ts';

const keys = generateSigningKeys();
const owner = randomUUID();
const skip = process.env.DATABASE_URL ? false : 'needs Postgres (DATABASE_URL): PGlite has no connections to cut';

let cleanup = async () => {};
after(() => cleanup());

test('five cuts of every database connection under load: the process stays up and every accepted event gets its run', { skip, timeout: 900_000 }, async (t) => {
  const database = await stackDatabase('flowdesk-dbcut-');
  cleanup = database.cleanup;
  const url = (database.dbConfig as { url: string }).url;
  const dbName = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const prev = cleanup;
  cleanup = async () => {
    await admin.end().catch(() => {});
    await prev();
  };

  const stack = await startStack({ keys, secretKey: randomBytes(32).toString('base64') }, database.dbConfig, '', (m) => t.diagnostic(m));
  let exit: string | undefined;
  stack.child.once('exit', (code, signal) => (exit = `exited with ${code ?? signal}`));
  const wf = await createWebhookWorkflow(stack, keys, owner, {
    nodes: [{ id: 'check', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } }],
    edges: [{ from: 'trigger', to: 'check' }],
  });

  // Load: webhooks from 16 senders (each retries a 5xx) and 8 readers of the owner's runs while the
  // connections are cut.
  let accepted = 0;
  const sending = send(stack, wf, 1_500, (n) => (accepted = n));
  const ownerToken = signInternalToken(keys, { sub: owner, aud: 'workflow-engine', scope: 'mcp:read', azp: 'test' });
  const listRuns = () => fetch(`${stack.engineUrl}/api/v1/workflow-runs?limit=5`, { headers: { authorization: `Bearer ${ownerToken}` } });
  let reading = true;
  const reads = { ok: 0, failed: 0 };
  const readers = Array.from({ length: 8 }, async () => {
    while (reading && !exit) {
      const res = await listRuns().catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status === 200) reads.ok++;
      else reads.failed++;
    }
  });
  const CUTS = 5;
  let terminated = 0;
  for (let cut = 1; cut <= CUTS && !exit; cut++) {
    const before = accepted;
    // Cut while work is in flight: after some more webhooks were accepted since the last cut.
    assert.ok(await until(() => accepted >= before + 50 || exit !== undefined, 300_000, 10), `webhooks accepted after cut ${cut - 1}`);
    const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    terminated += rowCount ?? 0;
  }
  const sent = await sending;
  reading = false;
  await Promise.all(readers);
  t.diagnostic(`${terminated} backends terminated in ${CUTS} cuts; ${sent.length} webhooks accepted; run lists: ${reads.ok} answered, ${reads.failed} failed`);
  assert.equal(exit, undefined, `the stack process survived the cuts (it ${exit})`);
  assert.ok(terminated >= CUTS, 'each cut terminated connections');

  // After the cuts: a new webhook is accepted, and every accepted event (before, during and after
  // the cuts) gets its succeeded run: the bus and the engine recovered.
  const afterwards = await send(stack, wf, 20);
  assert.equal(afterwards.length, 20, 'webhooks are accepted after the cuts');
  assert.equal((await listRuns()).status, 200, 'the runs API answers after the cuts');
  const all = [...sent, ...afterwards];
  const { finished, runs } = await untilSucceeded(stack, all);
  const done = new Set(runs.filter((r) => r.status === 'succeeded').map((r) => r.eventId));
  assert.ok(finished, `${all.filter((id) => !done.has(id)).length} of ${all.length} accepted events without a succeeded run`);
  assert.equal(exit, undefined, `the stack process is still up (it ${exit})`);
  stack.child.kill('SIGKILL');
  await stack.exited;
});
