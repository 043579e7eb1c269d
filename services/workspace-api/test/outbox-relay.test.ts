// The outbox relay (adapters/outbox.ts): a commit's nudge publishes at once; a failed drain (bus or
// database unreachable) is retried from 250 ms, doubling, without waiting for the 30 s safety poll;
// the safety poll itself publishes rows nobody nudged (a crashed process's).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, migrate, type TestDatabase } from '@flowdesk/db';
import type { EventPublisher } from '@flowdesk/contracts';
import { startOutboxRelay } from '../src/adapters/outbox.ts';

const MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
  await migrate(testDb.db, MIGRATIONS, 'workspace');
});
after(async () => {
  await testDb?.close();
});

const addRow = (key: string) => testDb.db.exec(`INSERT INTO "workspace"."outbox" (topic, key, value) VALUES ('workflow.changed', $1, '{"n":1}'::jsonb)`, [key]);
const remaining = async () => Number((await testDb.db.exec(`SELECT count(*)::int AS n FROM "workspace"."outbox"`)).rows[0]!.n);

/** Fails (not hangs) when `p` does not settle within `ms`: the relay's retry and poll are what is tested. */
const within = <T>(p: Promise<T>, ms: number, what: string) => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
};

/** A publisher that records what it got and fails the first `failures` calls. */
function publisher(failures: number) {
  const got: string[] = [];
  let calls = 0;
  let resolveGot: () => void = () => undefined;
  const arrived = new Promise<void>((r) => (resolveGot = r));
  const bus: EventPublisher = {
    async publish(_topic, messages) {
      calls++;
      if (calls <= failures) throw new Error('bus unreachable');
      got.push(...messages.map((m) => m.key));
      resolveGot();
    },
  };
  return { bus, got, arrived, calls: () => calls };
}

test('a failed drain is retried on its own, long before the safety poll', async () => {
  await addRow('retry-me');
  const p = publisher(3);
  const errors: unknown[] = [];
  const startedAt = Date.now();
  // The safety poll is ten minutes away: only the retry can publish the row.
  const relay = startOutboxRelay(testDb.db, p.bus, { pollMs: 600_000, onError: (e) => errors.push(e) });
  try {
    // 250 + 500 + 1000 ms of backoff: well inside 20 s, far from the 10-minute poll.
    await within(p.arrived, 20_000, 'published after three failures');
    assert.deepEqual(p.got, ['retry-me']);
    assert.equal(errors.length, 3);
    assert.ok(Date.now() - startedAt >= 1_500, 'the retries back off (250, 500, 1000 ms)');
    for (let i = 0; i < 100 && (await remaining()) > 0; i++) await new Promise((r) => setImmediate(r));
  } finally {
    await relay.close();
  }
  assert.equal(await remaining(), 0, 'published rows are deleted');
});

test('a nudge publishes at once; the safety poll publishes rows nobody nudged', async () => {
  const p = publisher(0);
  const relay = startOutboxRelay(testDb.db, p.bus, { pollMs: 200 });
  try {
    await addRow('left-behind');
    // No nudge: a crashed process's row, found by the poll.
    await within(p.arrived, 20_000, 'published by the poll');
    assert.deepEqual(p.got, ['left-behind']);
  } finally {
    await relay.close();
  }
  const q = publisher(0);
  const quiet = startOutboxRelay(testDb.db, q.bus, { pollMs: 600_000 });
  try {
    await addRow('nudged');
    quiet.nudge();
    await within(q.arrived, 20_000, 'published by the nudge');
    assert.deepEqual(q.got, ['nudged']);
  } finally {
    await quiet.close();
  }
});
