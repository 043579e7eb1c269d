// The embedded bus's group-commit publish path (what webhook-ingest's 200 waits for): concurrent
// publishes share statements, none resolves before its statement committed, a failed statement
// rejects exactly its own publishers, and what is stored is exactly what was published, once.
// PGlite by default, Postgres with DATABASE_URL (a fresh database per test).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type Database } from '@flowdesk/db';
import { createEmbeddedBus, type EventBus } from '../src/index.ts';
import { sqlLiteral } from '../src/embedded-store.ts';

type Exec = Database['exec'];
const PUBLISH_SQL = 'INSERT INTO bus.message (topic, key, value, headers, ordered) VALUES';

/**
 * The database as the bus sees it, with a hook around every publish statement (before it is sent,
 * after it answered), so a test can count, hold or fail the bus's writes.
 */
function observed(db: Database, hook: { before?: (sql: string) => Promise<void> | void; after?: (sql: string) => void }): Database {
  const wrap =
    (exec: Exec): Exec =>
    async (sql, params) => {
      if (!sql.includes(PUBLISH_SQL)) return exec(sql, params);
      await hook.before?.(sql);
      const res = await exec(sql, params);
      hook.after?.(sql);
      return res;
    };
  return {
    kind: db.kind,
    adapter: db.adapter,
    exec: wrap(db.exec),
    session: (fn) => db.session((exec) => fn(wrap(exec))),
    transaction: (fn) => db.transaction((exec) => fn(wrap(exec))),
    queryAsUser: db.queryAsUser,
    listen: db.listen.bind(db),
    close: () => db.close(),
  };
}

async function stored(db: Database, topic: string): Promise<{ key: string; value: any; headers: any }[]> {
  const { rows } = await db.exec('SELECT key, value, headers FROM bus.message WHERE topic = $1 ORDER BY sequence', [topic]);
  return rows as { key: string; value: any; headers: any }[];
}

describe('embedded bus: group-commit publish', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });
  async function setup(hook: Parameters<typeof observed>[1] = {}): Promise<{ db: Database; bus: EventBus }> {
    const tdb = await createTestDatabase();
    cleanup.push(() => tdb.close());
    const bus = await createEmbeddedBus(observed(tdb.db, hook));
    cleanup.push(() => bus.close());
    return { db: tdb.db, bus };
  }

  test('500 concurrent publishes are all committed, each once, in fewer statements, each call in its own order', { timeout: 60_000 }, async () => {
    let statements = 0;
    const { db, bus } = await setup({ after: () => void statements++ });
    const calls = 500;
    await Promise.all(
      Array.from({ length: calls }, (_, c) =>
        // Every fifth call publishes three messages, to check a call's messages stay together and in order.
        bus.publish(
          'gc.t',
          Array.from({ length: c % 5 === 0 ? 3 : 1 }, (_, i) => ({ key: `k${c % 7}`, value: { c, i } })),
        ),
      ),
    );
    const rows = await stored(db, 'gc.t');
    const expected = Array.from({ length: calls }, (_, c) => (c % 5 === 0 ? 3 : 1)).reduce((a, b) => a + b, 0);
    assert.equal(rows.length, expected, 'every message stored');
    const seen = new Set(rows.map((r) => `${r.value.c}/${r.value.i}`));
    assert.equal(seen.size, expected, 'no message stored twice');
    for (let i = 0; i < rows.length; i++) {
      if (rows[i]!.value.i > 0)
        assert.deepEqual(
          [rows[i - 1]!.value.c, rows[i - 1]!.value.i],
          [rows[i]!.value.c, rows[i]!.value.i - 1],
          'a call’s messages are stored together, in order',
        );
    }
    // Calls made in one turn share a statement (the point of group commit).
    assert.ok(statements < calls / 4, `${statements} statements for ${calls} calls`);
  });

  test('no publish resolves before the statement carrying it has committed', { timeout: 60_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let committed = 0;
    let first = true;
    const { db, bus } = await setup({
      before: async () => {
        if (first) {
          first = false;
          await gate; // hold the first write: nothing it carries may be acknowledged meanwhile
        }
      },
      after: () => void committed++,
    });
    const acknowledged: { n: number; committedThen: number }[] = [];
    const all = Array.from({ length: 40 }, (_, n) =>
      bus.publish('ack.t', [{ key: 'k', value: { n } }]).then(() => void acknowledged.push({ n, committedThen: committed })),
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(acknowledged.length, 0, 'nothing acknowledged while the first write is held');
    assert.equal((await stored(db, 'ack.t')).length, 0);
    release();
    await Promise.all(all);
    assert.equal(acknowledged.length, 40);
    for (const a of acknowledged) assert.ok(a.committedThen >= 1, `publish ${a.n} resolved after a commit`);
    // And every acknowledged event is there, read back through the database.
    assert.deepEqual(
      (await stored(db, 'ack.t')).map((r) => r.value.n).sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, n) => n),
    );
  });

  test('a failed statement rejects exactly its publishers; later batches are stored', { timeout: 60_000 }, async () => {
    let writes = 0;
    const { db, bus } = await setup({
      before: () => {
        if (++writes === 1) throw new Error('connection lost');
      },
    });
    // The first turn's calls form the failing batch; the next turn's are a batch of their own.
    const firstBatch = Array.from({ length: 10 }, (_, n) => bus.publish('fail.t', [{ key: 'k', value: { n } }]));
    const firstOutcome = Promise.allSettled(firstBatch);
    await new Promise((r) => setImmediate(r));
    const secondBatch = Array.from({ length: 10 }, (_, n) => bus.publish('fail.t', [{ key: 'k', value: { n: 100 + n } }]));
    const settledFirst = await firstOutcome;
    const settledSecond = await Promise.allSettled(secondBatch);
    assert.ok(
      settledFirst.every((s) => s.status === 'rejected' && /connection lost/.test(String(s.reason))),
      'the failed batch rejects all its publishers',
    );
    assert.ok(
      settledSecond.every((s) => s.status === 'fulfilled'),
      'the next batch is unaffected',
    );
    assert.deepEqual(
      (await stored(db, 'fail.t')).map((r) => r.value.n),
      Array.from({ length: 10 }, (_, n) => 100 + n),
    );
  });

  test('a message the database refuses fails its own publish only, not the batch it shared', { timeout: 60_000 }, async () => {
    let writes = 0;
    const { db, bus } = await setup({ before: () => void writes++ });
    // jsonb cannot hold \u0000: the statement with it fails as a whole, then each publish goes alone.
    const outcomes = await Promise.allSettled([
      bus.publish('poison.t', [{ key: 'k', value: { n: 1 } }]),
      bus.publish('poison.t', [{ key: 'k', value: { n: 2, text: 'nul \u0000 here' } }]),
      bus.publish('poison.t', [{ key: 'k', value: { n: 3 } }]),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      (await stored(db, 'poison.t')).map((r) => r.value.n),
      [1, 3],
      'the good ones stored once, in order',
    );
    assert.equal(writes, 4, 'one shared statement, then one per publish');
  });

  test('a value that cannot be serialised, or a key with NUL, rejects that call at once; the others are stored', { timeout: 60_000 }, async () => {
    const { db, bus } = await setup();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const outcomes = await Promise.allSettled([
      bus.publish('bad.t', [{ key: 'k', value: { n: 1 } }]),
      bus.publish('bad.t', [{ key: 'k', value: circular }]),
      bus.publish('bad.t', [{ key: 'k', value: { big: 1n } }]),
      bus.publish('bad.t', [{ key: 'a\u0000b', value: { n: 9 } }]),
      bus.publish('bad.t', [{ key: 'k', value: { n: 2 } }]),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      (await stored(db, 'bad.t')).map((r) => r.value.n),
      [1, 2],
    );
  });

  test('keys, values, headers and topics with quotes, backslashes and any Unicode are stored exactly', { timeout: 60_000 }, async () => {
    const { db, bus } = await setup();
    const nasty = ["it's", 'back\\slash', "\\'", "$$ $x$ E''", 'line\nbreak\ttab', 'émoji 🎉 中文', '--', '/* */', "'); DROP TABLE bus.message; --"];
    const topic = "quo't\\ed.t";
    for (const s of nasty) await bus.publish(topic, [{ key: s, value: { s, nested: { [s]: [s] } }, headers: { 'x-h': s } }]);
    const rows = await stored(db, topic);
    assert.deepEqual(
      rows.map((r) => r.key),
      nasty,
    );
    for (const [i, r] of rows.entries()) {
      assert.deepEqual(r.value, { s: nasty[i], nested: { [nasty[i]!]: [nasty[i]] } });
      assert.deepEqual(r.headers, { 'x-h': nasty[i] });
    }
  });

  test(
    'Postgres: publishes of a topic wait for its lock, so they commit one at a time, in sequence order, across processes',
    { timeout: 60_000 },
    async (t) => {
      const { db, bus } = await setup();
      if (db.kind !== 'postgres') return t.skip('needs Postgres (DATABASE_URL): a PGlite database belongs to one process');
      // Another "process" holding the topic's lock (as its publish would, until its commit) — even in
      // shared mode — must hold this publish back: otherwise a later sequence could commit before an
      // earlier, still uncommitted one, and the claim could hand a key's messages out of order.
      let done = false;
      // The session's promise adopts the publish's: it settles once the publish has.
      await db.session(async (exec) => {
        await exec('BEGIN');
        await exec('SELECT pg_advisory_xact_lock_shared(hashtext($1))', ['flowdesk-bus:lock.t']);
        const p = bus.publish('lock.t', [{ key: 'k', value: { n: 1 } }]).then(() => void (done = true));
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(done, false, 'the publish waited for the lock');
        assert.equal((await stored(db, 'lock.t')).length, 0);
        await exec('COMMIT');
        return p;
      });
      assert.equal((await stored(db, 'lock.t')).length, 1);
    },
  );

  test('sqlLiteral reads back the same text whatever standard_conforming_strings is', { timeout: 60_000 }, async () => {
    const tdb = await createTestDatabase();
    cleanup.push(() => tdb.close());
    const texts = ["it's", 'a\\b', "\\'", '\\\\', "E'x'", 'plain', ''];
    for (const setting of ['on', 'off']) {
      const got = await tdb.db.session(async (exec) => {
        await exec(`SET standard_conforming_strings = ${setting}`);
        try {
          const out: string[] = [];
          for (const t of texts) out.push(String((await exec(`SELECT ${sqlLiteral(t)}::text AS v`)).rows[0]!.v));
          return out;
        } finally {
          await exec('RESET standard_conforming_strings');
        }
      });
      assert.deepEqual(got, texts, `standard_conforming_strings = ${setting}`);
    }
  });
});
