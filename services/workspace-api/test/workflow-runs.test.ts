// The read side of workflow runs: runs are written by the workflow engine, so these tests insert
// them with Prisma as their owner (row-level security applies) and read them through the HTTP API.
// Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RunStatus, RunStep } from '@flowdesk/contracts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { asUser } from '../src/adapters/db.ts';
import { startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_KEYS = [
  'createdAt',
  'durationMs',
  'error',
  'eventId',
  'finishedAt',
  'id',
  'startedAt',
  'status',
  'steps',
  'triggerPayload',
  'warnings',
  'workflowId',
].sort();

/** A fixed instant plus `minutes`, so "newest first" does not depend on insertion speed. */
const at = (minutes: number, ms = 0) => new Date(Date.UTC(2026, 2, 1, 9, 0, 0) + minutes * 60_000 + ms);

interface RunInput {
  eventId?: string;
  status?: RunStatus;
  triggerPayload?: Record<string, unknown>;
  steps?: RunStep[];
  warnings?: string[];
  error?: string | null;
  createdAt?: Date;
  startedAt?: Date | null;
  finishedAt?: Date | null;
}

let api: TestApi;

/** Inserts a run as the workflow engine would: as its owner, through Prisma. */
function insertRun(ownerId: string, workflowId: string, r: RunInput = {}) {
  return asUser(api.workspace.prisma, ownerId, (tx) =>
    tx.workflowRun.create({
      data: {
        ownerId,
        workflowId,
        eventId: r.eventId ?? `evt_${randomUUID()}`,
        status: r.status ?? 'succeeded',
        triggerPayload: (r.triggerPayload ?? {}) as Prisma.InputJsonValue,
        steps: (r.steps ?? []) as unknown as Prisma.InputJsonValue,
        warnings: r.warnings ?? [],
        error: r.error ?? null,
        createdAt: r.createdAt,
        startedAt: r.startedAt ?? null,
        finishedAt: r.finishedAt ?? null,
      },
    }),
  );
}

async function createWorkflow(user: TestUser, name: string, triggerType = 'manual'): Promise<string> {
  const res = await user.call('POST', '/api/v1/workflows', { name, triggerType });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as string;
}

async function ids(user: TestUser, path: string): Promise<string[]> {
  const res = await user.call('GET', path);
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return (res.body.items as { id: string }[]).map((r) => r.id);
}

/** Every page of a listing, following nextCursor until it is null. */
async function allPages(user: TestUser, path: string, limit: number) {
  const pages: string[][] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const url: string = `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await user.call('GET', url);
    assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
    pages.push((res.body.items as { id: string }[]).map((r) => r.id));
    cursors.push(res.body.nextCursor);
    cursor = res.body.nextCursor;
    if (cursor === null) return { pages, cursors };
  }
  assert.fail('pagination did not end');
}

const STEPS: RunStep[] = [
  {
    nodeId: 'fetch',
    type: 'http_request',
    status: 'succeeded',
    input: { method: 'GET', url: 'https://api.example.test/tickets/7' },
    output: { status: 200, body: { state: 'open', tags: ['a', 'b'] } },
    error: null,
    startedAt: '2026-03-01T09:00:00.100Z',
    durationMs: 640,
  },
  {
    nodeId: 'check',
    type: 'condition',
    status: 'succeeded',
    input: { left: 'open', operator: 'equals', right: 'open' },
    output: { result: true },
    error: null,
    startedAt: '2026-03-01T09:00:00.740Z',
    durationMs: 1,
  },
  {
    nodeId: 'follow_up',
    type: 'create_task',
    status: 'failed',
    input: { title: 'Follow up 7' },
    output: null,
    error: 'project not found',
    startedAt: '2026-03-01T09:00:00.741Z',
    durationMs: 12.5,
  },
];

// User A: workflow one with five runs, workflow two with two; user B: one workflow with one run.
let userA: TestUser;
let userB: TestUser;
let wfOne: string;
let wfTwo: string;
let wfB: string;
/** Run ids by name. */
const run: Record<string, string> = {};

before(async () => {
  api = await startTestApi();
  userA = api.user();
  userB = api.user();
  wfOne = await createWorkflow(userA, 'One', 'webhook');
  wfTwo = await createWorkflow(userA, 'Two');
  wfB = await createWorkflow(userB, 'B’s');

  const specs: [string, string, RunInput][] = [
    ['one1', wfOne, { status: 'succeeded', createdAt: at(1), startedAt: at(1), finishedAt: at(1, 250) }],
    ['two1', wfTwo, { status: 'failed', createdAt: at(2), startedAt: at(2), finishedAt: at(2, 10) }],
    ['one2', wfOne, { status: 'failed', createdAt: at(3), startedAt: at(3), finishedAt: at(3, 1234), error: 'step follow_up failed', steps: STEPS, warnings: ['variable trigger.foo is empty'] }],
    ['one3', wfOne, { status: 'skipped', createdAt: at(4), startedAt: at(4), finishedAt: at(4, 5) }],
    ['two2', wfTwo, { status: 'succeeded', createdAt: at(5), startedAt: at(5), finishedAt: at(5, 99) }],
    ['one4', wfOne, { status: 'running', createdAt: at(6), startedAt: at(6), finishedAt: null }],
    ['one5', wfOne, { status: 'queued', createdAt: at(7), startedAt: null, finishedAt: null }],
  ];
  for (const [name, wf, r] of specs) run[name] = (await insertRun(userA.id, wf, r)).id;
  run.b1 = (await insertRun(userB.id, wfB, { status: 'failed', createdAt: at(8), eventId: 'evt_b' })).id;
});

after(async () => {
  await api?.close();
});

describe('GET /workflows/:id/runs', () => {
  test('the workflow’s runs only, newest first, each with the WorkflowRun shape', async () => {
    const res = await userA.call('GET', `/api/v1/workflows/${wfOne}/runs`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.nextCursor, null);
    const items = res.body.items as Record<string, unknown>[];
    assert.deepEqual(
      items.map((r) => r.id),
      [run.one5, run.one4, run.one3, run.one2, run.one1],
    );
    for (const r of items) {
      assert.deepEqual(Object.keys(r).sort(), RUN_KEYS, 'exactly the keys of a WorkflowRun');
      assert.match(String(r.id), UUID_RE);
      assert.equal(r.workflowId, wfOne);
      assert.ok(!('ownerId' in r), 'no owner id');
    }
    assert.deepEqual(await ids(userA, `/api/v1/workflows/${wfTwo}/runs`), [run.two2, run.two1]);
  });

  test('filter by status', async () => {
    assert.deepEqual(await ids(userA, `/api/v1/workflows/${wfOne}/runs?status=failed`), [run.one2]);
    assert.deepEqual(await ids(userA, `/api/v1/workflows/${wfOne}/runs?status=succeeded`), [run.one1], 'not two2 of the other workflow');
    assert.deepEqual(await ids(userA, `/api/v1/workflows/${wfOne}/runs?status=queued`), [run.one5]);
    assert.deepEqual(await ids(userA, `/api/v1/workflows/${wfTwo}/runs?status=skipped`), []);
    const bad = await userA.call('GET', `/api/v1/workflows/${wfOne}/runs?status=done`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
    assert.match(bad.body.message, /status/);
  });

  test('cursor pagination: limit=2 gives 2+2+1 without overlap, in order, nextCursor null at the end', async () => {
    const { pages, cursors } = await allPages(userA, `/api/v1/workflows/${wfOne}/runs`, 2);
    assert.deepEqual(pages, [
      [run.one5, run.one4],
      [run.one3, run.one2],
      [run.one1],
    ]);
    assert.equal(typeof cursors[0], 'string');
    assert.equal(cursors.at(-1), null);
  });

  test('a workflow without runs: an empty page; an unknown workflow: 404', async () => {
    const empty = await createWorkflow(userA, 'No runs yet');
    const res = await userA.call('GET', `/api/v1/workflows/${empty}/runs`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { items: [], nextCursor: null });
    const missing = await userA.call('GET', `/api/v1/workflows/${randomUUID()}/runs`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'not_found');
  });
});

describe('GET /workflow-runs', () => {
  test('runs of all the user’s workflows, newest first, none of another user’s', async () => {
    assert.deepEqual(await ids(userA, '/api/v1/workflow-runs'), [run.one5, run.one4, run.two2, run.one3, run.one2, run.two1, run.one1]);
    assert.deepEqual(await ids(userB, '/api/v1/workflow-runs'), [run.b1], 'B sees their own run');
  });

  test('filter by status across workflows', async () => {
    assert.deepEqual(await ids(userA, '/api/v1/workflow-runs?status=failed'), [run.one2, run.two1], 'not B’s failed run');
    assert.deepEqual(await ids(userA, '/api/v1/workflow-runs?status=succeeded'), [run.two2, run.one1]);
  });

  test('cursor pagination with limit=3 and with a status filter', async () => {
    const { pages } = await allPages(userA, '/api/v1/workflow-runs', 3);
    assert.deepEqual(pages, [
      [run.one5, run.one4, run.two2],
      [run.one3, run.one2, run.two1],
      [run.one1],
    ]);
    const filtered = await allPages(userA, '/api/v1/workflow-runs?status=succeeded', 1);
    assert.deepEqual(filtered.pages, [[run.two2], [run.one1]]);
  });

  test('runs created in the same millisecond are paged by id: none lost or repeated', async () => {
    const u = api.user();
    const wf = await createWorkflow(u, 'Burst');
    const same = at(30);
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push((await insertRun(u.id, wf, { createdAt: same })).id);
    const { pages } = await allPages(u, `/api/v1/workflows/${wf}/runs`, 1);
    assert.equal(pages.length, 4);
    assert.deepEqual(pages.flat(), [...made].sort().reverse(), 'ties ordered by id, descending');
  });

  test(
    'a cursor from another listing (GET /workflows) is refused with 400, as docs/workspace-api.md promises',
    async () => {
      const wfPage = await userA.call('GET', '/api/v1/workflows?limit=1');
      assert.equal(typeof wfPage.body.nextCursor, 'string');
      const res = await userA.call('GET', `/api/v1/workflow-runs?cursor=${encodeURIComponent(wfPage.body.nextCursor)}`);
      assert.deepEqual([res.status, res.body.error], [400, 'validation_failed']);
    },
  );

  test('a bogus cursor: 400 validation_failed', async () => {
    const res = await userA.call('GET', '/api/v1/workflow-runs?cursor=abc');
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'validation_failed');
  });
});

describe('GET /workflow-runs/:id', () => {
  test('a finished run: steps, warnings, payload, error, timestamps and durationMs = finishedAt − startedAt', async () => {
    const u = api.user();
    const wf = await createWorkflow(u, 'Detailed');
    const inserted = await insertRun(u.id, wf, {
      eventId: 'evt_detail',
      status: 'failed',
      triggerPayload: { ticket: { id: 7, title: 'Broken' }, list: [1, 2] },
      steps: STEPS,
      warnings: ['variable trigger.foo is empty', 'response truncated'],
      error: 'step follow_up failed',
      createdAt: at(10),
      startedAt: at(10, 100),
      finishedAt: at(10, 1334),
    });
    const res = await u.call('GET', `/api/v1/workflow-runs/${inserted.id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      id: inserted.id,
      workflowId: wf,
      eventId: 'evt_detail',
      status: 'failed',
      triggerPayload: { ticket: { id: 7, title: 'Broken' }, list: [1, 2] },
      steps: STEPS,
      warnings: ['variable trigger.foo is empty', 'response truncated'],
      error: 'step follow_up failed',
      createdAt: '2026-03-01T09:10:00.000Z',
      startedAt: '2026-03-01T09:10:00.100Z',
      finishedAt: '2026-03-01T09:10:01.334Z',
      durationMs: 1234,
    });
  });

  test('the same run as listed', async () => {
    const one = await userA.call('GET', `/api/v1/workflow-runs/${run.one2}`);
    const listed = (await userA.call('GET', `/api/v1/workflows/${wfOne}/runs?status=failed`)).body.items[0];
    assert.deepEqual(one.body, listed);
    assert.equal(one.body.durationMs, 1234);
    assert.deepEqual(one.body.steps, STEPS);
  });

  test('an unfinished run: finishedAt and durationMs null; a queued one: startedAt null too', async () => {
    const running = await userA.call('GET', `/api/v1/workflow-runs/${run.one4}`);
    assert.equal(running.status, 200);
    assert.equal(running.body.status, 'running');
    assert.equal(running.body.startedAt, at(6).toISOString());
    assert.equal(running.body.finishedAt, null);
    assert.equal(running.body.durationMs, null);
    assert.deepEqual(running.body.steps, []);
    assert.deepEqual(running.body.warnings, []);
    assert.equal(running.body.error, null);

    const queued = await userA.call('GET', `/api/v1/workflow-runs/${run.one5}`);
    assert.equal(queued.body.status, 'queued');
    assert.equal(queued.body.startedAt, null);
    assert.equal(queued.body.finishedAt, null);
    assert.equal(queued.body.durationMs, null);
  });

  test('a run that took 0 ms has durationMs 0 (not null)', async () => {
    const u = api.user();
    const wf = await createWorkflow(u, 'Instant');
    const r = await insertRun(u.id, wf, { status: 'skipped', startedAt: at(20), finishedAt: at(20) });
    const res = await u.call('GET', `/api/v1/workflow-runs/${r.id}`);
    assert.equal(res.body.durationMs, 0);
  });

  test('an unknown id: 404 not_found; a malformed id: 400', async () => {
    const res = await userA.call('GET', `/api/v1/workflow-runs/${randomUUID()}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
    const bad = await userA.call('GET', '/api/v1/workflow-runs/123');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
  });
});

describe('another user', () => {
  test('B’s run by id: 404 for A, answered exactly like an unknown id; B still sees it', async () => {
    const theirs = await userA.call('GET', `/api/v1/workflow-runs/${run.b1}`);
    const missing = await userA.call('GET', `/api/v1/workflow-runs/${randomUUID()}`);
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, missing.body);
    const own = await userB.call('GET', `/api/v1/workflow-runs/${run.b1}`);
    assert.equal(own.status, 200);
    assert.equal(own.body.eventId, 'evt_b');
  });

  test('B’s workflow runs listing: 404 for A, like an unknown workflow', async () => {
    const theirs = await userA.call('GET', `/api/v1/workflows/${wfB}/runs`);
    const missing = await userA.call('GET', `/api/v1/workflows/${randomUUID()}/runs`);
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, missing.body);
    assert.deepEqual(await ids(userB, `/api/v1/workflows/${wfB}/runs`), [run.b1]);
  });

  test('A’s runs do not exist for B either, whatever the filter', async () => {
    assert.equal((await userB.call('GET', `/api/v1/workflow-runs/${run.one2}`)).status, 404);
    assert.equal((await userB.call('GET', `/api/v1/workflows/${wfOne}/runs`)).status, 404);
    for (const status of ['queued', 'running', 'succeeded', 'skipped'] as const) {
      assert.deepEqual(await ids(userB, `/api/v1/workflow-runs?status=${status}`), [], status);
    }
  });
});

describe('deleting a workflow', () => {
  test('removes its runs: gone by id, from the listings and from the table; other workflows’ runs stay', async () => {
    const u = api.user();
    const doomed = await createWorkflow(u, 'Doomed');
    const kept = await createWorkflow(u, 'Kept');
    const r1 = (await insertRun(u.id, doomed, { createdAt: at(40) })).id;
    const r2 = (await insertRun(u.id, doomed, { status: 'failed', createdAt: at(41) })).id;
    const k1 = (await insertRun(u.id, kept, { createdAt: at(42) })).id;
    assert.deepEqual(await ids(u, '/api/v1/workflow-runs'), [k1, r2, r1]);

    const del = await u.call('DELETE', `/api/v1/workflows/${doomed}`);
    assert.equal(del.status, 204);

    assert.equal((await u.call('GET', `/api/v1/workflow-runs/${r1}`)).status, 404);
    assert.equal((await u.call('GET', `/api/v1/workflow-runs/${r2}`)).status, 404);
    assert.equal((await u.call('GET', `/api/v1/workflows/${doomed}/runs`)).status, 404);
    assert.deepEqual(await ids(u, '/api/v1/workflow-runs'), [k1]);
    const { rows } = await api.workspace.db.exec(
      'SELECT count(*)::int AS n FROM "workspace"."workflow_run" WHERE id = ANY($1::uuid[])',
      [[r1, r2]],
    );
    assert.equal(rows[0]?.n, 0, 'the rows are gone from the database, not just hidden');
  });
});

describe('one run per event', () => {
  test('the same eventId twice on one workflow is refused by the database (P2002); the first run stays alone', async () => {
    const u = api.user();
    const wf = await createWorkflow(u, 'Idempotent', 'webhook');
    const first = await insertRun(u.id, wf, { eventId: 'evt_dup', status: 'succeeded' });
    await assert.rejects(
      insertRun(u.id, wf, { eventId: 'evt_dup', status: 'queued' }),
      (e: unknown) => {
        assert.ok(e instanceof Prisma.PrismaClientKnownRequestError, `a Prisma known request error, got ${String(e)}`);
        assert.equal(e.code, 'P2002', e.message);
        return true;
      },
    );
    const runs = (await u.call('GET', `/api/v1/workflows/${wf}/runs`)).body.items as { id: string; eventId: string; status: string }[];
    assert.deepEqual(
      runs.map((r) => [r.id, r.eventId, r.status]),
      [[first.id, 'evt_dup', 'succeeded']],
    );
  });

  test('the same eventId on another workflow is a separate run (one event may trigger several workflows)', async () => {
    const u = api.user();
    const a = await createWorkflow(u, 'First listener', 'note');
    const b = await createWorkflow(u, 'Second listener', 'note');
    const ra = await insertRun(u.id, a, { eventId: 'evt_shared' });
    const rb = await insertRun(u.id, b, { eventId: 'evt_shared' });
    assert.notEqual(ra.id, rb.id);
    assert.deepEqual(await ids(u, `/api/v1/workflows/${a}/runs`), [ra.id]);
    assert.deepEqual(await ids(u, `/api/v1/workflows/${b}/runs`), [rb.id]);
  });
});
