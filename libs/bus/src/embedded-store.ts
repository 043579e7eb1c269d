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
 * The embedded bus's SQL, one statement per operation so that each is atomic on its own (on PGlite
 * an explicit BEGIN on the shared connection could swallow another component's statements).
 * On Postgres, operations that fan a message out to the registered groups run in a short
 * transaction holding the topic's exclusive advisory lock (publish: one implicit transaction), so a
 * registration's backfill and a concurrent publish never miss each other, and publishes of a topic
 * commit one after another — in sequence order, across processes too (see publish).
 */
export class EmbeddedStore {
  constructor(private readonly db: Database) {}

  /** PGlite: through the session queue, so a statement never lands inside someone else's open transaction. */
  private run(sql: string, params: unknown[] = []): Promise<{ rows: Row[] }> {
    if (this.db.kind === 'pglite') return this.db.session((exec) => exec(sql, params));
    return this.db.exec(sql, params);
  }

  private async underTopicLock(topic: string, sql: string, params: unknown[]): Promise<{ rows: Row[] }> {
    if (this.db.kind === 'pglite') return this.run(sql, params);
    return this.db.session(async (exec) => {
      await exec('BEGIN');
      try {
        await exec('SELECT pg_advisory_xact_lock(hashtext($1))', [`flowdesk-bus:${topic}`]);
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
   * Inserts the messages in order and a pending delivery for every group of the topic, in one round
   * trip; resolves after commit. On Postgres the text is two statements sent as one simple query, which
   * the server runs as one implicit transaction: the topic lock first, then the insert, whose snapshot
   * is taken after the lock was granted (READ COMMITTED: a snapshot per statement), so it sees every
   * group registered before. The lock is exclusive, held to commit: sequences are drawn under it, so
   * rows of a topic become visible in sequence order even with several publishing processes — the
   * claim relies on that for per-key order (a key's later message must never be handed out before, or
   * alongside, an earlier one that commits late). One process has one write in flight per topic
   * anyway, so this costs nothing there; across processes it serialises one round trip per batch. Values are inlined as escaped
   * literals because the simple protocol (the only one that takes several statements) has no
   * parameters; they are already JSON text (see EncodedMessage).
   */
  async publish(topic: string, messages: EncodedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const t = sqlLiteral(topic);
    const rows = messages.map((m) => `(${t}, ${sqlLiteral(m.key)}, ${sqlLiteral(m.value)}, ${m.headers === '{}' ? "'{}'" : sqlLiteral(m.headers)})`);
    // Multi-row VALUES: sequences are drawn in list order, so the batch keeps its publish order.
    const insert = `WITH m AS (
         INSERT INTO bus.message (topic, key, value, headers) VALUES ${rows.join(',\n')}
         RETURNING sequence, key
       )
       INSERT INTO bus.delivery (group_id, sequence, topic, key)
       SELECT s.group_id, m.sequence, ${t}, m.key FROM m JOIN bus.subscription s ON s.topic = ${t}`;
    if (this.db.kind === 'pglite') {
      // One connection: no concurrent registration to guard against, and no lock to take.
      await this.db.session((exec) => exec(insert));
      return;
    }
    await this.db.exec(`SELECT pg_advisory_xact_lock(hashtext(${sqlLiteral(`flowdesk-bus:${topic}`)}));\n${insert}`);
  }

  /** Registers the group; a new group gets a delivery for every message already on the topic. */
  async register(topic: string, groupId: string): Promise<void> {
    await this.underTopicLock(
      topic,
      `WITH s AS (
         INSERT INTO bus.subscription (topic, group_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING group_id
       )
       INSERT INTO bus.delivery (group_id, sequence, topic, key)
       SELECT s.group_id, m.sequence, m.topic, m.key FROM s CROSS JOIN bus.message m WHERE m.topic = $1
       ON CONFLICT DO NOTHING`,
      [topic, groupId],
    );
  }

  /**
   * Leases up to `limit` deliveries: only a key's oldest pending message is eligible, and only when
   * it is due and not leased, so one key's messages go out one at a time, in order, to whichever
   * consumer asks — across processes too. SKIP LOCKED keeps two concurrent claims off the same row.
   */
  async claim(topic: string, groupId: string, consumerId: string, limit: number, leaseMs: number): Promise<ClaimedRow[]> {
    const { rows } = await this.run(
      `WITH c AS (
         SELECT d.group_id, d.sequence FROM bus.delivery d
         WHERE d.group_id = $1 AND d.topic = $2 AND d.done_at IS NULL
           AND d.available_at <= now()
           AND (d.locked_until IS NULL OR d.locked_until < now())
           AND NOT EXISTS (
             SELECT 1 FROM bus.delivery e
             WHERE e.group_id = d.group_id AND e.topic = d.topic AND e.key = d.key
               AND e.done_at IS NULL AND e.sequence < d.sequence)
         ORDER BY d.sequence
         LIMIT $3
         FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE bus.delivery d
          SET attempts = d.attempts + 1, locked_by = $4, locked_until = now() + $5::double precision * interval '1 millisecond'
         FROM c, bus.message m
        WHERE d.group_id = c.group_id AND d.sequence = c.sequence AND m.sequence = d.sequence
       RETURNING d.sequence::text AS sequence, d.attempts, m.id::text AS id, m.topic, m.key, m.value, m.headers, m.created_at`,
      [groupId, topic, limit, consumerId, leaseMs],
    );
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

  /** Marks done; a no-op if the lease was lost meanwhile (the new holder will handle it again). */
  async ack(groupId: string, sequence: string, consumerId: string): Promise<void> {
    await this.run(
      `UPDATE bus.delivery SET done_at = now(), locked_until = NULL
        WHERE group_id = $1 AND sequence = $2::bigint AND locked_by = $3 AND done_at IS NULL`,
      [groupId, sequence, consumerId],
    );
  }

  /** Releases the lease and makes the delivery due again after `delayMs`; the key stays blocked until then. */
  async retryLater(groupId: string, sequence: string, consumerId: string, delayMs: number, error: string): Promise<void> {
    await this.run(
      `UPDATE bus.delivery
          SET locked_by = NULL, locked_until = NULL, available_at = now() + $4::double precision * interval '1 millisecond', last_error = $5
        WHERE group_id = $1 AND sequence = $2::bigint AND locked_by = $3 AND done_at IS NULL`,
      [groupId, sequence, consumerId, delayMs, error],
    );
  }

  /** Gives back leases taken but not started (a claim that returned while closing). */
  async release(groupId: string, sequences: string[], consumerId: string): Promise<void> {
    if (sequences.length === 0) return;
    await this.run(
      `UPDATE bus.delivery SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1
        WHERE group_id = $1 AND sequence = ANY($2::bigint[]) AND locked_by = $3 AND done_at IS NULL`,
      [groupId, sequences, consumerId],
    );
  }

  /** Extends the leases of the consumer's in-flight deliveries, so a slow handler keeps its message. */
  async renew(groupId: string, sequences: string[], consumerId: string, leaseMs: number): Promise<void> {
    if (sequences.length === 0) return;
    await this.run(
      `UPDATE bus.delivery SET locked_until = now() + $4::double precision * interval '1 millisecond'
        WHERE group_id = $1 AND sequence = ANY($2::bigint[]) AND locked_by = $3 AND done_at IS NULL`,
      [groupId, sequences, consumerId, leaseMs],
    );
  }

  /**
   * In one statement: marks the delivery done and dead with the error, and publishes a copy of the
   * message to `<topic>.dlq` (original headers plus the error), fanned out to that topic's groups.
   * Only while this consumer still holds the lease, so a message is dead-lettered once.
   */
  async deadLetter(topic: string, groupId: string, sequence: string, consumerId: string, attempts: number, error: string, summary: string): Promise<void> {
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
          WHERE group_id = $1 AND sequence = $2::bigint AND locked_by = $3 AND done_at IS NULL
         RETURNING sequence
       ), m AS (
         INSERT INTO bus.message (topic, key, value, headers)
         SELECT $4, o.key, o.value, o.headers || $6::jsonb || jsonb_build_object($7::text, o.id::text)
           FROM bus.message o JOIN dead ON o.sequence = dead.sequence
         RETURNING sequence, key
       )
       INSERT INTO bus.delivery (group_id, sequence, topic, key)
       SELECT s.group_id, m.sequence, $4, m.key FROM m JOIN bus.subscription s ON s.topic = $4`,
      [groupId, sequence, consumerId, dlq, error, JSON.stringify(extra), DLQ_HEADERS.originalId],
    );
  }
}
