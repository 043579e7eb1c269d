import { randomUUID } from 'node:crypto';
import type { Database } from '@flowdesk/db';
import { WORKFLOW_CHANGED_TOPIC, type EventPublisher, type WorkflowChange, type WorkflowChanged } from '@flowdesk/contracts';
import type { Workflow as WorkflowRow } from '../generated/prisma/client.ts';
import { toDefinition } from '../domain/mappers.ts';
import type { Tx } from './db.ts';

/**
 * Appends a workflow.changed event to the outbox inside the change's own transaction: the event
 * exists iff the change committed. `row` is the workflow after the change, or null with `deleted`.
 */
export async function announceWorkflowChange(
  tx: Tx,
  change: WorkflowChange,
  row: WorkflowRow | { id: string; ownerId: string; version: number; deleted: true },
  now: Date,
): Promise<void> {
  const deleted = 'deleted' in row;
  const event: WorkflowChanged = {
    eventId: randomUUID(),
    workflowId: row.id,
    ownerId: row.ownerId,
    version: row.version,
    change,
    changedAt: now.toISOString(),
    definition: deleted ? null : toDefinition(row),
  };
  await tx.$executeRawUnsafe(
    'INSERT INTO "workspace"."outbox" (topic, key, value) VALUES ($1, $2, $3::jsonb)',
    WORKFLOW_CHANGED_TOPIC,
    row.id,
    JSON.stringify(event),
  );
}

export interface OutboxRelay {
  /** A change committed: publish soon (the poll catches anything a nudge missed). */
  nudge(): void;
  close(): Promise<void>;
}

/** The safety poll's default: only rows a crashed process left behind wait for it (a commit nudges). */
export const OUTBOX_POLL_MS = 30_000;
/** After a failed drain (bus or database unreachable): the first retry; doubling up to the poll interval. */
const RETRY_FIRST_MS = 250;

/**
 * Publishes the outbox to the bus and deletes what was published, in id order: on a nudge after each
 * commit, again after a failed drain (from 250 ms, doubling up to `pollMs`), and every `pollMs`
 * (default 30 s) for rows a crashed process left behind. At-least-once: a crash between
 * publishing and deleting publishes those rows again, which the consumers' version check absorbs. Two
 * relays (replicas) may publish a row twice for the same reason; never zero times.
 */
export function startOutboxRelay(
  db: Database,
  bus: EventPublisher,
  options: { pollMs?: number; batch?: number; onError?: (err: unknown) => void } = {},
): OutboxRelay {
  const batch = options.batch ?? 200;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const pollMs = options.pollMs ?? OUTBOX_POLL_MS;
  let retryMs = 0;
  let retry: NodeJS.Timeout | undefined;
  const drain = async () => {
    for (;;) {
      const { rows } = await db.exec(`SELECT id, topic, key, value FROM "workspace"."outbox" ORDER BY id LIMIT ${batch}`);
      if (rows.length === 0) return;
      const byTopic = new Map<string, { key: string; value: object }[]>();
      for (const r of rows) {
        const value = (typeof r.value === 'string' ? JSON.parse(r.value) : r.value) as object;
        byTopic.set(String(r.topic), [...(byTopic.get(String(r.topic)) ?? []), { key: String(r.key), value }]);
      }
      for (const [topic, messages] of byTopic) await bus.publish(topic, messages);
      // By id, not by range: a row with a lower id may commit after this read.
      await db.exec('DELETE FROM "workspace"."outbox" WHERE id = ANY($1::bigint[])', [rows.map((r) => String(r.id))]);
      if (rows.length < batch) return;
    }
  };
  const kick = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(retry);
    running = drain()
      .then(
        () => {
          retryMs = 0;
        },
        (err: unknown) => {
          options.onError?.(err);
          retryMs = Math.min(pollMs, retryMs === 0 ? RETRY_FIRST_MS : retryMs * 2);
          retry = setTimeout(kick, retryMs);
          retry.unref();
        },
      )
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  };
  const timer = setInterval(kick, pollMs);
  timer.unref();
  kick();
  return {
    nudge: kick,
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(retry);
      await running;
    },
  };
}
