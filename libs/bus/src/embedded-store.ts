import type { Database } from '@flowdesk/db';
import { DLQ_HEADERS, dlqTopicOf, type ReceivedMessage } from './bus.ts';

/** A claimed delivery: the message plus the attempt number this claim is. */
export interface ClaimedRow {
  sequence: string;
  message: ReceivedMessage;
}

type Row = Record<string, unknown>;

/** A message as stored: value and headers already serialised to JSON text by the publisher. */
export interface EncodedMessage {
  key: string;
  value: string;
  headers: string;
  /** OutgoingMessage.ordered. */
  ordered: boolean;
}

/**
 * A SQL string literal, valid whatever standard_conforming_strings is set to (the node-postgres
 * escapeLiteral rule): quotes doubled, and with any backslash the E'' form with backslashes doubled.
 * A NUL character cannot be in SQL text at all; Postgres rejects it, as it would as a parameter.
 */
export function sqlLiteral(text: string): string {
  const quoted = text.includes("'") ? text.replaceAll("'", "''") : text;
  return text.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * LEASE_STATES — what the lease columns of a delivery say, relied on by every statement that finds
 * deliveries by sequence (they avoid `done_at IS NULL`, see the note above retryLater):
 * - never claimed, released, or waiting for a retry: locked_by NULL, locked_until NULL, not done;
 * - leased: locked_by and locked_until set (an expired lease: locked_until in the past), not done;
 * - done (acknowledged or dead-lettered): locked_until NULL, locked_by kept (the last holder).
 * So "still held by consumer C" is `locked_by = C AND locked_until IS NOT NULL`, and "claimable" is
 * `locked_by IS NULL OR locked_until < now()` (a done row fails both branches).
 */
/** A delivery to acknowledge: its sequence and key (the key's lane is locked first). */
export interface Ack {
  sequence: string;
  key: string;
}

/**
 * The channel a bus notifies on when a commit made deliveries claimable (payload: the sending bus's
 * id, a space, the topic), in the same statement text as the write, so it is sent at that commit.
 */
export const BUS_CHANNEL = 'flowdesk_bus';

/** A non-negative integer as SQL text (inlined into multi-statement text, which takes no parameters). */
function int(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`expected a non-negative integer, got ${n}`);
  return String(n);
}

function seq(s: string): string {
  if (!/^\d{1,19}$/.test(s)) throw new RangeError(`not a sequence: ${JSON.stringify(s)}`);
  return s;
}

/**
 * After a statement's CTE `d` (group_id, sequence, key) inserted deliveries of topic `t`: their lanes,
 * one per (group, key), inserted or moved on (last_seq; head too when the lane had no work, i.e.
 * head > last_seq). Rows are taken in (group, key) order, the order acknowledgements lock lanes in.
 */
const LANE_UPSERT = (t: string) => `INSERT INTO bus.lane AS l (group_id, topic, key, head, last_seq)
       SELECT d.group_id, ${t}, d.key, min(d.sequence), max(d.sequence) FROM d GROUP BY d.group_id, d.key ORDER BY d.group_id, d.key
       ON CONFLICT (group_id, topic, key) DO UPDATE
          SET head = CASE WHEN l.head > l.last_seq THEN EXCLUDED.head ELSE l.head END,
              last_seq = GREATEST(l.last_seq, EXCLUDED.last_seq)`;

/**
 * The new head of lane `l` once the deliveries selected by `done` are done: its first other not-done
 * delivery (the statement's snapshot does not yet show its own updates), or last_seq + 1 when none.
 */
const NEXT_HEAD = (g: string, t: string, done: string) => `COALESCE((
           SELECT e.sequence FROM bus.delivery e
            WHERE e.group_id = ${g} AND e.topic = ${t} AND e.key = l.key AND e.done_at IS NULL AND e.sequence NOT IN (${done})
            ORDER BY e.sequence LIMIT 1), l.last_seq + 1)`;

/**
 * Acknowledges deliveries of one group (literals already escaped): first the lanes of their keys are
 * locked, in key order; then, in a statement whose snapshot is taken after those locks were granted,
 * the deliveries are marked done (only while this consumer holds the lease) and each lane whose head
 * was acknowledged moves to its next not-done delivery. The lock makes concurrent acknowledgements of
 * one key (keyConcurrency > 1, or several consumers) see each other, so a head is never left on a
 * delivery that is already done. Only those lanes are updated: a lane with no work has head =
 * last_seq + 1, which may be the sequence of another key's message, so `head IN (acknowledged)`
 * alone would also match (and lock, out of key order) that idle lane, and deadlock with a publish
 * that locked it first and waits for one of ours (seen: 8 of 10,000 webhooks answered 503).
 */
function ackSql(g: string, t: string, c: string, acks: Ack[]): string {
  const keys = [...new Set(acks.map((a) => a.key))].map(sqlLiteral).join(', ');
  const seqs = acks.map((a) => seq(a.sequence)).join(', ');
  return `SELECT 1 FROM bus.lane WHERE group_id = ${g} AND topic = ${t} AND key IN (${keys}) ORDER BY key FOR UPDATE;
     WITH a AS (
       UPDATE bus.delivery SET done_at = now(), locked_until = NULL
        WHERE group_id = ${g} AND topic = ${t} AND key IN (${keys}) AND sequence IN (${seqs}) AND locked_by = ${c} AND locked_until IS NOT NULL
       RETURNING sequence
     )
     UPDATE bus.lane l SET head = ${NEXT_HEAD(g, t, 'SELECT sequence FROM a')}
      WHERE l.group_id = ${g} AND l.topic = ${t} AND l.key IN (${keys}) AND l.head IN (SELECT sequence FROM a)`;
}

/**
 * Leases up to `limit` deliveries of a group. A delivery is eligible when it is due and not leased,
 * and within its key's window: among the first `keyConcurrency` not-done deliveries of its key (so at
 * most that many of a key are in flight, also across the consumers of a group), with no earlier
 * not-done `ordered` one (that holds back later ones) and, when it is `ordered` itself, with no
 * earlier not-done one at all. keyConcurrency 1 is strict per-key order: only a key's oldest not-done
 * delivery is eligible.
 *
 * Cost O(claimed), not O(backlog): the group's lanes with work are walked in head order (oldest
 * waiting work first) through their partial index, and for each only the first keyConcurrency
 * not-done deliveries of its key are read (an index range with LIMIT); the walk stops at the first
 * `limit` lanes that have something eligible. Lanes passed over are those whose window is in flight
 * or in backoff, at most the group's in-flight work. The candidates of those lanes are then taken in
 * sequence order. SKIP LOCKED keeps two concurrent claims off the same row; the window depends only
 * on which deliveries are done, which only grows, so a claim working on a slightly old snapshot can
 * only be more cautious, never hand out too much.
 */
function claimSql(g: string, t: string, c: string, limit: string, leaseMs: number, keyConcurrency: string): string {
  return `/* bus claim */ WITH lanes AS (
       SELECT l.key, win.seqs FROM bus.lane l
       CROSS JOIN LATERAL (
         SELECT array_agg(x.sequence) AS seqs FROM (
           SELECT d.sequence, d.ordered, d.locked_until, d.available_at,
                  row_number() OVER k AS pos,
                  bool_or(d.ordered) OVER (k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS ordered_before
             FROM (SELECT e.sequence, e.ordered, e.locked_until, e.available_at FROM bus.delivery e
                    WHERE e.group_id = ${g} AND e.topic = ${t} AND e.key = l.key AND e.done_at IS NULL
                    ORDER BY e.sequence LIMIT ${keyConcurrency}) d
           WINDOW k AS (ORDER BY d.sequence)
         ) x
         WHERE (x.locked_until IS NULL OR x.locked_until < now()) AND x.available_at <= now()
           AND x.ordered_before IS NOT TRUE AND (NOT x.ordered OR x.pos = 1)
       ) win
       WHERE l.group_id = ${g} AND l.topic = ${t} AND l.head <= l.last_seq AND win.seqs IS NOT NULL
       ORDER BY l.head
       LIMIT ${limit}
     ), cand AS (
       SELECT u.key, u.s FROM (SELECT lanes.key, unnest(lanes.seqs) AS s FROM lanes) u ORDER BY u.s LIMIT ${limit}
     ), c AS (
       SELECT d.group_id, d.sequence FROM bus.delivery d
        WHERE d.group_id = ${g} AND d.topic = ${t}
          AND d.key = ANY (ARRAY(SELECT DISTINCT cand.key FROM cand))
          AND d.sequence = ANY (ARRAY(SELECT cand.s FROM cand))
          AND d.available_at <= now() AND (d.locked_by IS NULL OR d.locked_until < now())
        FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE bus.delivery d
        SET attempts = d.attempts + 1, locked_by = ${c}, locked_until = now() + ${int(leaseMs)} * interval '1 millisecond'
       FROM c, bus.message m
      WHERE d.group_id = c.group_id AND d.sequence = c.sequence AND m.sequence = d.sequence
     RETURNING d.sequence::text AS sequence, d.attempts, m.id::text AS id, m.topic, m.key, m.value, m.headers, m.created_at`;
}

/**
 * The embedded bus's SQL, one statement per operation so that each is atomic on its own (on PGlite
 * an explicit BEGIN on the shared connection could swallow another component's statements).
 * On Postgres, operations that fan a message out to the registered groups run in a short
 * transaction holding the topic's exclusive advisory lock (publish: one implicit transaction), so a
 * registration's backfill and a concurrent publish never miss each other, and publishes of a topic
 * commit one after another — in sequence order, across processes too (see publish).
 */
export class EmbeddedStore {
  /** `origin`: this bus's id, in the payload of its notifications, so that it can skip its own. */
  constructor(
    private readonly db: Database,
    private readonly origin = '',
  ) {}

  /** `SELECT pg_notify(…)` for a commit that made deliveries of `topic` claimable (see BUS_CHANNEL). */
  private notifySql(topic: string): string {
    return `SELECT pg_notify('${BUS_CHANNEL}', ${sqlLiteral(`${this.origin} ${topic}`)})`;
  }

  /** Tells the other buses on the database that `topic` may have claimable deliveries (a release, a dead letter). */
  async signal(topic: string): Promise<void> {
    await this.run(this.notifySql(topic));
  }

  /** PGlite: through the session queue, so a statement never lands inside someone else's open transaction. */
  private run(sql: string, params: unknown[] = []): Promise<{ rows: Row[] }> {
    if (this.db.kind === 'pglite') return this.db.session((exec) => exec(sql, params));
    return this.db.exec(sql, params);
  }

  /** `lock`: a statement run first in the same transaction (taking row locks), Postgres only. */
  private underTopicLock(topic: string, sql: string, params: unknown[], lock?: string, lockParams?: unknown[]): Promise<{ rows: Row[] }> {
    return this.underLocks([`flowdesk-bus:${topic}`], sql, params, lock, lockParams);
  }

  /**
   * Runs `sql` in a transaction holding the named advisory locks (taken in the order given) on
   * Postgres; on PGlite, one connection, a single statement through the session queue.
   */
  private async underLocks(locks: string[], sql: string, params: unknown[], lock?: string, lockParams?: unknown[]): Promise<{ rows: Row[] }> {
    if (this.db.kind === 'pglite') return this.run(sql, params);
    return this.db.session(async (exec) => {
      await exec('BEGIN');
      try {
        for (const name of locks) await exec('SELECT pg_advisory_xact_lock(hashtext($1))', [name]);
        if (lock) await exec(lock, lockParams);
        const res = await exec(sql, params);
        await exec('COMMIT');
        return res;
      } catch (err) {
        await exec('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  /**
   * Inserts the messages in order and a pending delivery for every group of the topic, and moves the
   * groups' lanes (one per key: last_seq, and head when the lane had no work), in one round trip;
   * resolves after commit. On Postgres the text is two statements sent as one simple query, which
   * the server runs as one implicit transaction: the topic lock first, then the insert, whose snapshot
   * is taken after the lock was granted (READ COMMITTED: a snapshot per statement), so it sees every
   * group registered before. The lock is exclusive, held to commit: sequences are drawn under it, so
   * rows of a topic become visible in sequence order even with several publishing processes — the
   * claim relies on that for per-key order (a key's later message must never be handed out before, or
   * alongside, an earlier one that commits late). One process has one write in flight per topic
   * anyway, so this costs nothing there; across processes it serialises one round trip per batch.
   * Values are inlined as escaped literals because the simple protocol (the only one that takes
   * several statements) has no parameters; they are already JSON text (see EncodedMessage). Lane rows
   * are locked in (group, key) order, as acknowledgements lock them, so the two never deadlock.
   */
  async publish(topic: string, messages: EncodedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const t = sqlLiteral(topic);
    const rows = messages.map(
      (m) => `(${t}, ${sqlLiteral(m.key)}, ${sqlLiteral(m.value)}, ${m.headers === '{}' ? "'{}'" : sqlLiteral(m.headers)}, ${m.ordered})`,
    );
    // Multi-row VALUES: sequences are drawn in list order, so the batch keeps its publish order.
    const insert = `WITH m AS (
         INSERT INTO bus.message (topic, key, value, headers, ordered) VALUES ${rows.join(',\n')}
         RETURNING sequence, key, ordered
       ), d AS (
         INSERT INTO bus.delivery (group_id, sequence, topic, key, ordered)
         SELECT s.group_id, m.sequence, ${t}, m.key, m.ordered FROM m JOIN bus.subscription s ON s.topic = ${t}
         RETURNING group_id, sequence, key
       )
       ${LANE_UPSERT(t)}`;
    if (this.db.kind === 'pglite') {
      // One connection: no concurrent registration to guard against, and no lock to take.
      await this.db.session((exec) => exec(`${insert};\n${this.notifySql(topic)}`));
      return;
    }
    await this.db.exec(`SELECT pg_advisory_xact_lock(hashtext(${sqlLiteral(`flowdesk-bus:${topic}`)}));\n${insert};\n${this.notifySql(topic)}`);
  }

  /**
   * Not-done deliveries of a group per key, each counted up to atMost: one index range per key
   * (delivery_pending_key_idx) with a LIMIT, so the cost is bounded by keys × atMost, not the backlog.
   */
  async backlog(topic: string, groupId: string, keys: string[], atMost: number): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const { rows } = await this.db.exec(
      `SELECT k.key, (SELECT count(*)::int FROM (
          SELECT 1 FROM bus.delivery d WHERE d.group_id = $1 AND d.topic = $2 AND d.key = k.key AND d.done_at IS NULL LIMIT $4) x) AS n
         FROM unnest($3::text[]) AS k(key)`,
      [groupId, topic, keys, atMost],
    );
    return new Map(rows.map((r) => [String(r.key), Number(r.n)]));
  }

  /**
   * The publish time of the oldest not-done delivery of a group among these keys: per key the lowest
   * pending sequence (one step down delivery_pending_key_idx), then its message's created_at.
   */
  async oldestUnprocessed(topic: string, groupId: string, keys: string[]): Promise<Date | null> {
    if (keys.length === 0) return null;
    const { rows } = await this.db.exec(
      `SELECT min(m.created_at) AS oldest
         FROM unnest($3::text[]) AS k(key)
         CROSS JOIN LATERAL (
           SELECT d.sequence FROM bus.delivery d
            WHERE d.group_id = $1 AND d.topic = $2 AND d.key = k.key AND d.done_at IS NULL
            ORDER BY d.sequence LIMIT 1) p
         JOIN bus.message m ON m.sequence = p.sequence`,
      [groupId, topic, keys],
    );
    const oldest = rows[0]?.oldest;
    return oldest === null || oldest === undefined ? null : new Date(oldest as string | Date);
  }

  /**
   * Registers the group; a new group gets a delivery (and lanes) for every message already on the
   * topic. Holds the topic's publish lock and its sweep lock, so the sweeper never deletes a message
   * this backfill is giving a pending delivery.
   */
  async register(topic: string, groupId: string): Promise<void> {
    await this.underLocks(
      [`flowdesk-bus:${topic}`, `flowdesk-bus-sweep:${topic}`],
      `WITH s AS (
         INSERT INTO bus.subscription (topic, group_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING group_id
       ), d AS (
         INSERT INTO bus.delivery (group_id, sequence, topic, key, ordered)
         SELECT s.group_id, m.sequence, m.topic, m.key, m.ordered FROM s CROSS JOIN bus.message m WHERE m.topic = $1
         ON CONFLICT DO NOTHING
         RETURNING group_id, sequence, key
       )
       ${LANE_UPSERT('$1')}`,
      [topic, groupId],
    );
  }

  /**
   * In one round trip and one commit: acknowledges `acks` (deliveries whose handlers resolved), then
   * leases up to `limit` deliveries (the claim sees the acknowledgements, so a key's next message
   * is handed out in the same trip that finished the previous one). Either part may be empty.
   * Returns the claimed deliveries in sequence order.
   */
  async ackAndClaim(
    topic: string,
    groupId: string,
    consumerId: string,
    acks: Ack[],
    limit: number,
    leaseMs: number,
    keyConcurrency = 1,
  ): Promise<ClaimedRow[]> {
    const parts: string[] = [];
    const g = sqlLiteral(groupId);
    const t = sqlLiteral(topic);
    const c = sqlLiteral(consumerId);
    if (acks.length > 0) parts.push(ackSql(g, t, c, acks));
    if (limit > 0) parts.push(claimSql(g, t, c, int(limit), Math.max(0, Math.round(leaseMs)), int(keyConcurrency)));
    if (parts.length === 0) return [];
    const { rows } = await this.run(parts.join(';\n'));
    if (limit === 0) return [];
    return rows
      .map((r) => ({
        sequence: String(r.sequence),
        message: {
          id: String(r.id),
          topic: String(r.topic),
          key: String(r.key),
          value: r.value,
          headers: (r.headers ?? {}) as Record<string, string>,
          attempt: Number(r.attempts),
          publishedAt: new Date(r.created_at as string | Date),
        },
      }))
      .sort((a, b) => (BigInt(a.sequence) < BigInt(b.sequence) ? -1 : 1));
  }

  /** Leases up to `limit` deliveries (see claimSql). */
  claim(topic: string, groupId: string, consumerId: string, limit: number, leaseMs: number, keyConcurrency = 1): Promise<ClaimedRow[]> {
    return this.ackAndClaim(topic, groupId, consumerId, [], limit, leaseMs, keyConcurrency);
  }

  /** Marks done; a no-op if the lease was lost meanwhile (the new holder will handle it again). */
  async ack(topic: string, groupId: string, consumerId: string, acks: Ack[]): Promise<void> {
    await this.ackAndClaim(topic, groupId, consumerId, acks, 0, 0);
  }

  // Statements that find deliveries by sequence say "not done" through the lease, not `done_at IS
  // NULL`: with that predicate the planner may take the partial pending-per-key index, which has the
  // sequence only after the key, and scan the group's whole pending backlog in it (seen on Postgres
  // with fresh statistics-less tables: 10 ms per claim at 10,000 pending). The lease columns say the
  // same thing (see LEASE_STATES), and leave the primary key as the only index that applies.

  /** Releases the lease and makes the delivery due again after `delayMs`; the key stays blocked until then. */
  async retryLater(topic: string, groupId: string, ref: Ack, consumerId: string, delayMs: number, error: string): Promise<void> {
    await this.run(
      `UPDATE bus.delivery
          SET locked_by = NULL, locked_until = NULL, available_at = now() + $4::double precision * interval '1 millisecond', last_error = $5
        WHERE group_id = $1 AND topic = $6 AND key = $7 AND sequence = $2::bigint AND locked_by = $3 AND locked_until IS NOT NULL`,
      [groupId, ref.sequence, consumerId, delayMs, error, topic, ref.key],
    );
  }

  /** Gives back leases taken but not started (a claim that returned while closing). */
  async release(topic: string, groupId: string, refs: Ack[], consumerId: string): Promise<void> {
    if (refs.length === 0) return;
    await this.run(
      `UPDATE bus.delivery SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1
        WHERE group_id = $1 AND topic = $4 AND key = ANY($5::text[]) AND sequence = ANY($2::bigint[]) AND locked_by = $3 AND locked_until IS NOT NULL`,
      [groupId, refs.map((r) => r.sequence), consumerId, topic, [...new Set(refs.map((r) => r.key))]],
    );
  }

  /** Extends the leases of the consumer's in-flight deliveries, so a slow handler keeps its message. */
  async renew(topic: string, groupId: string, refs: Ack[], consumerId: string, leaseMs: number): Promise<void> {
    if (refs.length === 0) return;
    await this.run(
      `UPDATE bus.delivery SET locked_until = now() + $4::double precision * interval '1 millisecond'
        WHERE group_id = $1 AND topic = $5 AND key = ANY($6::text[]) AND sequence = ANY($2::bigint[]) AND locked_by = $3 AND locked_until IS NOT NULL`,
      [groupId, refs.map((r) => r.sequence), consumerId, leaseMs, topic, [...new Set(refs.map((r) => r.key))]],
    );
  }

  /**
   * In one statement: marks the delivery done and dead with the error, and publishes a copy of the
   * message to `<topic>.dlq` (original headers plus the error), fanned out to that topic's groups.
   * Only while this consumer still holds the lease, so a message is dead-lettered once.
   */
  async deadLetter(topic: string, groupId: string, ref: Ack, consumerId: string, attempts: number, error: string, summary: string): Promise<void> {
    const { sequence, key } = ref;
    const dlq = dlqTopicOf(topic);
    const extra = {
      [DLQ_HEADERS.error]: summary,
      [DLQ_HEADERS.attempts]: String(attempts),
      [DLQ_HEADERS.originalTopic]: topic,
      [DLQ_HEADERS.groupId]: groupId,
    };
    await this.underTopicLock(
      dlq,
      `WITH dead AS (
         UPDATE bus.delivery SET done_at = now(), dead_at = now(), locked_until = NULL, last_error = $5
          WHERE group_id = $1 AND topic = $8 AND key = $9 AND sequence = $2::bigint AND locked_by = $3 AND locked_until IS NOT NULL
         RETURNING sequence, key
       ), src AS (
         UPDATE bus.lane l SET head = ${NEXT_HEAD('$1', '$8', 'SELECT sequence FROM dead')}
          WHERE l.group_id = $1 AND l.topic = $8 AND l.key = $9 AND l.head IN (SELECT sequence FROM dead)
       ), m AS (
         INSERT INTO bus.message (topic, key, value, headers, ordered)
         SELECT $4, o.key, o.value, o.headers || $6::jsonb || jsonb_build_object($7::text, o.id::text), o.ordered
           FROM bus.message o JOIN dead ON o.sequence = dead.sequence
         RETURNING sequence, key, ordered
       ), d AS (
         INSERT INTO bus.delivery (group_id, sequence, topic, key, ordered)
         SELECT s.group_id, m.sequence, $4, m.key, m.ordered FROM m JOIN bus.subscription s ON s.topic = $4
         RETURNING group_id, sequence, key
       )
       ${LANE_UPSERT('$4')}`,
      [groupId, sequence, consumerId, dlq, error, JSON.stringify(extra), DLQ_HEADERS.originalId, topic, key],
      `SELECT 1 FROM bus.lane WHERE group_id = $1 AND topic = $2 AND key = $3 FOR UPDATE`,
      [groupId, topic, key],
    );
  }

  /** Marks the group as alive (the sweeper drops groups not seen for BUS_GROUP_EXPIRY_MS). */
  async heartbeat(topic: string, groupId: string): Promise<void> {
    await this.run('UPDATE bus.subscription SET seen_at = now() WHERE topic = $1 AND group_id = $2', [topic, groupId]);
  }

  /**
   * Drops the groups no consumer has marked alive for `expiryMs`: subscription, lanes and deliveries,
   * in one statement per group under the topic's publish lock (so no publish fans out to it
   * meanwhile). Returns the groups dropped.
   */
  async expireGroups(expiryMs: number): Promise<{ topic: string; groupId: string }[]> {
    const { rows } = await this.run(`SELECT topic, group_id FROM bus.subscription WHERE seen_at < now() - $1::double precision * interval '1 millisecond'`, [
      expiryMs,
    ]);
    const dropped: { topic: string; groupId: string }[] = [];
    for (const r of rows) {
      const topic = String(r.topic);
      const groupId = String(r.group_id);
      if (await this.dropGroup(topic, groupId, expiryMs)) dropped.push({ topic, groupId });
    }
    return dropped;
  }

  /**
   * Drops one group of a topic — subscription, lanes and deliveries — in one statement under the
   * topic's publish lock; with `notSeenForMs`, only if no consumer marked it alive for that long.
   * An ephemeral subscription's close() drops its group this way. True when it was dropped.
   */
  async dropGroup(topic: string, groupId: string, notSeenForMs?: number): Promise<boolean> {
    const res = await this.underTopicLock(
      topic,
      `WITH s AS (
         DELETE FROM bus.subscription
          WHERE topic = $1 AND group_id = $2 AND ($3::double precision IS NULL OR seen_at < now() - $3::double precision * interval '1 millisecond')
         RETURNING group_id
       ), l AS (
         DELETE FROM bus.lane WHERE group_id IN (SELECT group_id FROM s) AND topic = $1
       ), d AS (
         DELETE FROM bus.delivery WHERE group_id IN (SELECT group_id FROM s) AND topic = $1
       )
       SELECT group_id FROM s`,
      [topic, groupId, notSeenForMs ?? null],
    );
    return res.rows.length > 0;
  }

  /** The topics that have stored messages: a skip scan over the (topic, sequence) index, one probe per topic. */
  async topics(): Promise<string[]> {
    const { rows } = await this.run(
      `WITH RECURSIVE t AS (
         (SELECT topic FROM bus.message ORDER BY topic LIMIT 1)
         UNION ALL
         SELECT (SELECT m.topic FROM bus.message m WHERE m.topic > t.topic ORDER BY m.topic LIMIT 1) FROM t WHERE t.topic IS NOT NULL
       )
       SELECT topic FROM t WHERE topic IS NOT NULL`,
    );
    return rows.map((r) => String(r.topic));
  }

  /**
   * Deletes up to `batch` messages of the topic older than `retentionMs` whose every delivery is done
   * (delivered to, or dead-lettered by, each group the message was fanned out to), oldest first, with
   * their delivery rows. The candidates are read from the oldest message up to the first one younger
   * than the cut-off, so a sweep with nothing to do costs the messages still kept past it, not the
   * topic. Holds the topic's sweep lock (not its publish lock: publishing goes on meanwhile), which
   * a registration also takes, so a new group's backfill never gets a delivery for a deleted message.
   * Returns how many messages were deleted.
   */
  async sweep(topic: string, retentionMs: number, batch: number): Promise<number> {
    const { rows } = await this.underLocks(
      [`flowdesk-bus-sweep:${topic}`],
      `WITH cutoff AS (
         SELECT COALESCE((
           SELECT sequence FROM bus.message
            WHERE topic = $1 AND created_at >= now() - $2::double precision * interval '1 millisecond'
            ORDER BY sequence LIMIT 1), 9223372036854775807) AS s
       ), v AS (
         SELECT m.sequence FROM bus.message m, cutoff
          WHERE m.topic = $1 AND m.sequence < cutoff.s
            AND m.created_at < now() - $2::double precision * interval '1 millisecond'
            AND NOT EXISTS (
              SELECT 1 FROM bus.subscription s JOIN bus.delivery d ON d.group_id = s.group_id AND d.sequence = m.sequence
               WHERE s.topic = $1 AND d.done_at IS NULL)
          ORDER BY m.sequence
          LIMIT $3
       ), dd AS (
         DELETE FROM bus.delivery d USING v, bus.subscription s
          WHERE s.topic = $1 AND d.group_id = s.group_id AND d.sequence = v.sequence
       )
       DELETE FROM bus.message WHERE sequence IN (SELECT sequence FROM v) RETURNING sequence`,
      [topic, retentionMs, batch],
    );
    return rows.length;
  }
}
