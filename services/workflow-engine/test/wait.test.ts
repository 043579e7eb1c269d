// Parked runs and the Wait node (issue 24 item 4) over real HTTP on a real engine + workspace-api +
// embedded bus (PGlite, or Postgres with DATABASE_URL): a duration and an until wait resume on time,
// the resume URL (right and wrong secret, twice), Approve / Reject, Resume now, the timeout branch, a
// cancel drops the timer, and two engines on one database resume each run exactly once.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
const credentialsKey = randomBytes(32);
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
/** Paths the receiver was sent, with the JSON bodies. */
const received: { url: string; body: string; at: number }[] = [];
/** Trigger n values whose POST the receiver answers only after SLOW_MS (a step longer than a lease). */
const slow = new Set<string>();
const SLOW_MS = 5_000;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

// Resume links known before the Wait ({{wait.<id>.resumeUrl}}) are keyed by the credentials key.
const startEngine = (waits?: { leaseMs?: number; pollMs?: number }) =>
  startEngineOn(stack, { credentialsKey: { key: credentialsKey }, ...(waits ? { waits } : {}) });

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push({ url: req.url ?? '', body: req.body, at: Date.now() });
      const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '';
      if (slow.has(n)) setTimeout(() => json(res, 201, { ok: true }), SLOW_MS);
      else json(res, 201, { ok: true });
    },
  });
  ({ app: engine, url: engineUrl } = await startEngine());
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

type Wait = Record<string, string>;
/** trigger → wait → (branch) POST /after/<branch>?n={{trigger.n}} for each branch. */
async function createWorkflow(owner: string, wait: Wait) {
  const branches = ['resumed', 'rejected', 'timeout'];
  const res = await call(owner, 'POST', '/api/v1/workflows', {
    name: 'Wait then post',
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [
        { id: 'wait', type: 'wait', params: wait },
        ...branches.map((b) => ({
          id: `after_${b}`,
          type: 'http_request',
          params: { method: 'POST', url: `${stack.receiver!.url}/after/${b}?n={{trigger.n}}`, body: '{"wait": {{= $string(nodes.wait) }} }' },
        })),
      ],
      edges: [{ from: 'trigger', to: 'wait' }, ...branches.map((b) => ({ from: 'wait', to: `after_${b}`, branch: b }))],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const api = runsApi(call);
const { runNow, getRun, waiting } = api;
const finished = (owner: string, id: string, timeoutMs = 10_000) => api.finished(owner, id, timeoutMs);
/** The Wait node's output as the HTTP step after it sent it (the body param is sent as a JSON string). */
const waitOf = (p: { body: string }) => {
  const v: unknown = JSON.parse(p.body);
  return (JSON.parse(typeof v === 'string' ? v : p.body) as { wait: { resumedBy: string; resumedAt: string; body?: unknown } }).wait;
};
const postsFor = (n: string) => received.filter((r) => r.url.endsWith(`?n=${n}`));
const resumeUrlOf = (run: { steps: { nodeId: string; output: { resumeUrl?: string } }[] }) => run.steps.find((s) => s.nodeId === 'wait')!.output.resumeUrl!;
/** The resume link's path on this engine (the link names the public base URL). */
const onEngine = (link: string) => `${engineUrl}${new URL(link).pathname}${new URL(link).search}`;

describe('Wait node', () => {
  test('a duration wait parks the run (no memory, a timer) and resumes it on time', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'duration', amount: '2', unit: 'seconds' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    assert.equal(parked.wait.nodeId, 'wait');
    assert.equal(parked.wait.resumable, false);
    const due = Date.parse(parked.wait.until);
    assert.deepEqual(
      parked.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status]),
      [['wait', 'waiting']],
    );
    assert.equal(postsFor(n).length, 0);
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const posts = postsFor(n);
    assert.deepEqual(
      posts.map((p) => p.url.split('?')[0]),
      ['/after/resumed'],
    );
    assert.ok(posts[0]!.at >= due, 'not before its due time');
    // One run on a shared machine: within a few polls (the bench measures the p99 of 10,000).
    assert.ok(posts[0]!.at - due < 3_000, `on time (${posts[0]!.at - due} ms late)`);
    const out = waitOf(posts[0]!);
    assert.equal(out.resumedBy, 'timer');
    assert.ok(Date.parse(out.resumedAt) >= due);
    const waitStep = done.steps.find((s: { nodeId: string }) => s.nodeId === 'wait');
    assert.equal(waitStep.status, 'succeeded');
    // Resumed, the Wait ran once: no "2 attempts" on the run page.
    assert.equal(waitStep.attempts, undefined, JSON.stringify(waitStep));
  });

  test('a step before the Wait whose output is a JSON string ("", "yes", "123") is read back as sent when the run resumes', async () => {
    const owner = randomUUID();
    const res = await call(owner, 'POST', '/api/v1/workflows', {
      name: 'String outputs then wait',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [
          { id: 'empty', type: 'code', params: { code: "return ''" } },
          { id: 'yes', type: 'code', params: { code: "return 'yes'" } },
          { id: 'digits', type: 'code', params: { code: "return '123'" } },
          { id: 'wait', type: 'wait', params: { mode: 'duration', amount: '1', unit: 'seconds' } },
          {
            id: 'after',
            type: 'http_request',
            params: {
              method: 'POST',
              url: `${stack.receiver!.url}/after/strings?n={{trigger.n}}`,
              body: '{{= $string([nodes.empty, nodes.yes, nodes.digits]) }}',
            },
          },
        ],
        edges: [
          { from: 'trigger', to: 'empty' },
          { from: 'empty', to: 'yes' },
          { from: 'yes', to: 'digits' },
          { from: 'digits', to: 'wait' },
          { from: 'wait', to: 'after', branch: 'resumed' },
        ],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const n = randomUUID();
    const run = await runNow(owner, res.body as { id: string }, { n });
    // Parked for 1 s (its checkpoints written), then resumed from them: the three outputs are read back.
    const done = await finished(owner, run.id, 30_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.steps.find((s: { nodeId: string }) => s.nodeId === 'wait').output.resumedBy, 'timer', 'it parked and was resumed');
    const [post] = postsFor(n);
    // The body param is sent as a JSON string (see waitOf): its text is the three outputs.
    const sent: unknown = JSON.parse(post!.body);
    assert.deepEqual(typeof sent === 'string' ? JSON.parse(sent) : sent, ['', 'yes', '123'], post!.body);
  });

  test('an until wait takes a templated date-time; one in the past continues at once', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'until', until: '{{trigger.at}}' });
    const n1 = randomUUID();
    const at = new Date(Date.now() + 1_500).toISOString();
    const r1 = await runNow(owner, wf, { n: n1, at });
    assert.equal((await waiting(owner, r1.id)).wait.until, at);
    const n2 = randomUUID();
    const r2 = await runNow(owner, wf, { n: n2, at: '2020-01-01T00:00:00Z' });
    assert.equal((await finished(owner, r2.id)).status, 'succeeded');
    assert.equal((await finished(owner, r1.id)).status, 'succeeded');
    assert.ok(postsFor(n1)[0]!.at >= Date.parse(at));
    const bad = await runNow(owner, wf, { n: randomUUID(), at: 'tomorrow' });
    const failed = await finished(owner, bad.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /not an ISO 8601 date-time/);
  });

  test('the resume URL: a wrong secret is refused, the right one resumes once with its body, twice is 409', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'resume' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    assert.equal(parked.wait.resumable, true);
    assert.equal(parked.wait.until, null);
    const link = resumeUrlOf(parked);
    assert.match(link, /^http:\/\/flowdesk\.test\/api\/v1\/resume\/[0-9a-f-]{36}\?secret=[A-Za-z0-9_-]{43}$/);
    const post = (url: string, body?: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    const wrong = await post(onEngine(link).replace(/secret=.*/, 'secret=wrong'), { approved: true });
    assert.equal(wrong.status, 401);
    assert.equal(((await wrong.json()) as { error: string }).error, 'unauthorized');
    const unknown = await post(onEngine(link).replace(/resume\/[0-9a-f-]{36}/, `resume/${randomUUID()}`), {});
    assert.equal(unknown.status, 404);
    assert.equal((await getRun(owner, run.id)).status, 'waiting');

    const ok = await post(onEngine(link), { approved: true, by: 'ana' });
    assert.equal(ok.status, 202, await ok.clone().text());
    const twice = await post(onEngine(link), { approved: false });
    assert.equal(twice.status, 409);
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded');
    const posts = postsFor(n);
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.url.split('?')[0], '/after/resumed');
    const out = waitOf(posts[0]!);
    assert.equal(out.resumedBy, 'resume');
    assert.deepEqual(out.body, { approved: true, by: 'ana' });
  });

  test('a step before the Wait sends its resume link ({{wait.<id>.resumeUrl}}); a POST to it resumes the run', async () => {
    const owner = randomUUID();
    const res = await call(owner, 'POST', '/api/v1/workflows', {
      name: 'Ask, then wait for the answer',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [
          {
            id: 'ask',
            type: 'http_request',
            params: { method: 'POST', url: `${stack.receiver!.url}/ask?n={{trigger.n}}`, body: '{"link": "{{wait.wait.resumeUrl}}"}' },
          },
          { id: 'wait', type: 'wait', params: { mode: 'resume' } },
          {
            id: 'after',
            type: 'http_request',
            params: { method: 'POST', url: `${stack.receiver!.url}/after/resumed?n={{trigger.n}}`, body: '{"wait": {{= $string(nodes.wait) }} }' },
          },
        ],
        edges: [
          { from: 'trigger', to: 'ask' },
          { from: 'ask', to: 'wait' },
          { from: 'wait', to: 'after', branch: 'resumed' },
        ],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const n = randomUUID();
    const run = await runNow(owner, res.body as { id: string }, { n });
    const asked = await until('the approver was sent the link', async () => received.find((r) => r.url === `/ask?n=${n}`));
    const link = (JSON.parse(asked.body) as { link: string }).link;
    assert.match(link, /^http:\/\/flowdesk\.test\/api\/v1\/resume\/[0-9a-f-]{36}\?secret=[A-Za-z0-9_-]{43}$/);
    const parked = await waiting(owner, run.id);
    assert.equal(resumeUrlOf(parked), link, 'the link sent before the Wait is the one it waits on');
    const { rows } = await stack.testDb.db.exec(`SELECT secret_hash FROM "engine"."run_wait" WHERE run_id = $1`, [run.id]);
    assert.ok(!String(rows[0]!.secret_hash).includes(new URL(link).searchParams.get('secret')!), 'only the hash is stored');
    const wrong = await fetch(onEngine(link).replace(/secret=.*/, 'secret=x'), { method: 'POST' });
    assert.equal(wrong.status, 401);
    const ok = await fetch(onEngine(link), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' });
    assert.equal(ok.status, 202, await ok.clone().text());
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const out = waitOf(postsFor(n).find((p) => p.url.startsWith('/after/resumed'))!);
    assert.equal(out.resumedBy, 'resume');
    assert.deepEqual(out.body, { approved: true });
    // A run of its own: another event, another link.
    const other = await runNow(owner, res.body as { id: string }, { n: randomUUID() });
    assert.notEqual(resumeUrlOf(await waiting(owner, other.id)), link);
    await call(owner, 'POST', `/api/v1/workflow-runs/${other.id}/cancel`);
  });

  test('Approve and Reject on the run (owner only) follow resumed and rejected', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'resume' });
    const [na, nr] = [randomUUID(), randomUUID()];
    const a = await runNow(owner, wf, { n: na });
    const r = await runNow(owner, wf, { n: nr });
    await waiting(owner, a.id);
    await waiting(owner, r.id);
    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflow-runs/${a.id}/resume`, { action: 'approve' })).status, 404);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/resume`, { action: 'maybe' })).status, 400);
    const approved = await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/resume`, { action: 'approve', body: { note: 'ok' } });
    assert.equal(approved.status, 202, JSON.stringify(approved.body));
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/resume`, { action: 'reject' })).status, 409);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${r.id}/resume`, { action: 'reject' })).status, 202);
    await finished(owner, a.id);
    await finished(owner, r.id);
    assert.deepEqual(
      postsFor(na).map((p) => p.url.split('?')[0]),
      ['/after/resumed'],
    );
    assert.deepEqual(waitOf(postsFor(na)[0]!).body, { note: 'ok' });
    assert.equal(waitOf(postsFor(na)[0]!).resumedBy, 'approve');
    assert.deepEqual(
      postsFor(nr).map((p) => p.url.split('?')[0]),
      ['/after/rejected'],
    );
    // A finished run is no longer waiting.
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/resume`, { action: 'approve' })).status, 409);
  });

  test('a resume wait with a timeout follows the timeout branch when nobody resumes it', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'resume', timeoutAmount: '1', timeoutUnit: 'seconds' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    assert.ok(parked.wait.until);
    await finished(owner, run.id);
    assert.deepEqual(
      postsFor(n).map((p) => p.url.split('?')[0]),
      ['/after/timeout'],
    );
    const link = resumeUrlOf(parked);
    const late = await fetch(onEngine(link), { method: 'POST' });
    assert.ok([404, 409].includes(late.status), `a resume after the timeout is refused (${late.status})`);
  });

  test('Resume now (owner only, write scope) wakes a timer wait at once, exactly once when two calls race; other waits and runs answer 409', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'duration', amount: '1', unit: 'hours' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    const path = `/api/v1/workflow-runs/${run.id}/resume-now`;
    assert.equal((await call(randomUUID(), 'POST', path)).status, 404, "another owner's run is not found");
    assert.equal((await call(owner, 'POST', path, undefined, 'mcp:read')).status, 403, 'a read-only caller may not');
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${randomUUID()}/resume-now`)).status, 404);
    assert.equal((await getRun(owner, run.id)).status, 'waiting', 'the refusals resumed nothing');

    const sentAt = Date.now();
    const answers = await Promise.all([call(owner, 'POST', path), call(owner, 'POST', path)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [202, 409], JSON.stringify(answers.map((a) => a.body)));
    assert.deepEqual(answers.find((a) => a.status === 202)!.body, { runId: run.id, resumedBy: 'timer' });
    assert.match((answers.find((a) => a.status === 409)!.body as { message: string }).message, /already resumed/);
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    // On the resumed branch at once (an hour early), as if the timer had fired; once: one POST after it.
    const posts = postsFor(n);
    assert.deepEqual(
      posts.map((p) => p.url.split('?')[0]),
      ['/after/resumed'],
    );
    assert.ok(posts[0]!.at < Date.parse(parked.wait.until) - 3_500_000, 'long before its timer');
    const out = waitOf(posts[0]!);
    assert.equal(out.resumedBy, 'timer');
    assert.ok(Date.parse(out.resumedAt) >= sentAt - 1_000 && Date.parse(out.resumedAt) < Date.parse(parked.wait.until));
    assert.equal((await call(owner, 'POST', path)).status, 409, 'a finished run is not waiting');

    // A wait for a resume has Approve / Reject: Resume now leaves it waiting.
    const approval = await createWorkflow(owner, { mode: 'resume', timeoutAmount: '1', timeoutUnit: 'days' });
    const a = await runNow(owner, approval, { n: randomUUID() });
    await waiting(owner, a.id);
    const refused = await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/resume-now`);
    assert.equal(refused.status, 409);
    assert.match((refused.body as { message: string }).message, /Approve or Reject/);
    assert.equal((await getRun(owner, a.id)).status, 'waiting');
    await call(owner, 'POST', `/api/v1/workflow-runs/${a.id}/cancel`);
  });

  test('cancelling a waiting run drops its timer: it never resumes', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'duration', amount: '1', unit: 'seconds' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    await waiting(owner, run.id);
    const cancelled = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/cancel`);
    assert.equal(cancelled.status, 200);
    const { rows } = await stack.testDb.db.exec(`SELECT count(*)::int AS n FROM "engine"."run_wait" WHERE run_id = $1`, [run.id]);
    assert.equal(rows[0]!.n, 0);
    // A later run of the same workflow resumes after 1 s: by then the cancelled one would have too.
    const later = await runNow(owner, wf, { n: randomUUID() });
    await finished(owner, later.id);
    assert.equal((await getRun(owner, run.id)).status, 'cancelled');
    assert.equal(postsFor(n).length, 0);
  });
});

describe('two engines on one database', () => {
  test('each waiting run resumes exactly once', async () => {
    const second = await startEngine();
    try {
      const owner = randomUUID();
      const wf = await createWorkflow(owner, { mode: 'duration', amount: '1', unit: 'seconds' });
      const ns = Array.from({ length: 40 }, () => randomUUID());
      const runs = await Promise.all(ns.map((n) => runNow(owner, wf, { n })));
      for (const r of runs) assert.equal((await finished(owner, r.id, 20_000)).status, 'succeeded');
      for (const n of ns) assert.equal(postsFor(n).length, 1, `run ${n} resumed once`);
    } finally {
      await second.app.close();
    }
  });
});

describe('a woken run longer than its lease', () => {
  test('runs once: the replica running it renews the lease, the other never claims it', async () => {
    // Two engines with a 1.5 s lease (renewed every 0.5 s) and the step after the Wait taking 5 s:
    // without renewal the other engine would claim the wake again after 1.5 s and POST a second time.
    // The suite's engine (30 s lease) stops first, so these two are the only claimers.
    await engine.close();
    const a = await startEngine({ leaseMs: 1_500 });
    const b = await startEngine({ leaseMs: 1_500 });
    engine = a.app;
    engineUrl = a.url;
    try {
      const owner = randomUUID();
      const wf = await createWorkflow(owner, { mode: 'duration', amount: '1', unit: 'seconds' });
      const ns = Array.from({ length: 4 }, () => randomUUID());
      for (const n of ns) slow.add(n);
      const runs = await Promise.all(ns.map((n) => runNow(owner, wf, { n })));
      for (const r of runs) assert.equal((await finished(owner, r.id, 30_000)).status, 'succeeded');
      for (const n of ns) assert.equal(postsFor(n).length, 1, `run ${n} resumed once`);
    } finally {
      await b.app.close();
    }
  });
});

describe('wake-ups, not polls', () => {
  test('with a safety poll of a minute, a 1.5 s wait resumes on time and a resume link at once (the park and the resume notify)', async () => {
    // The only engine polls once a minute: only the notification of the park's fire_at (and of the
    // resume's) can wake it in time (migration 20270310000000_wake_notify).
    await engine.close();
    const only = await startEngine({ pollMs: 60_000 });
    engine = only.app;
    engineUrl = only.url;
    const owner = randomUUID();
    const wf = await createWorkflow(owner, { mode: 'duration', amount: '1.5', unit: 'seconds' });
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const due = Date.parse((await waiting(owner, run.id)).wait.until);
    assert.equal((await finished(owner, run.id)).status, 'succeeded');
    const late = postsFor(n)[0]!.at - due;
    assert.ok(late >= 0, 'not before its due time');
    // A bound for a loaded machine (1.7 s seen at load 8); without the wake-up the next look is 60 s away.
    assert.ok(late < 5_000, `resumed ${late} ms after its due time`);

    // A resume wait (a day's timeout): the link's POST sets fire_at to now, and that wakes the engine.
    const linked = await createWorkflow(owner, { mode: 'resume', timeoutAmount: '1', timeoutUnit: 'days' });
    const m = randomUUID();
    const parked = await waiting(owner, (await runNow(owner, linked, { m, n: m })).id);
    const sentAt = Date.now();
    const resumed = await fetch(onEngine(resumeUrlOf(parked)), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(resumed.status, 202, await resumed.text());
    await until('the resumed run posted', () => postsFor(m).length > 0);
    const after = postsFor(m)[0]!.at - sentAt;
    assert.ok(after < 5_000, `resumed ${after} ms after the link's POST`);
  });
});
