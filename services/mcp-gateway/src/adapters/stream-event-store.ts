import type { Database } from '@flowdesk/db';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { STREAM_EVENT_TTL_MS, parseEventId, type StoredEvent, type StreamEvents } from '../domain/stream-events.ts';

/**
 * SSE events in Postgres (gateway.mcp_stream_event), shared by every replica: a client reconnecting
 * with Last-Event-ID may reach any of them. Plain SQL: one INSERT per event on the (rare) SSE answers
 * of 2025-11-25 sessions; JSON answers, what the SDK clients ask for, store nothing.
 */
export function sqlStreamEvents(exec: Database['exec']): StreamEvents {
  return {
    forSession(sessionHash) {
      return {
        async storeEvent(streamId, message) {
          const { rows } = await exec(
            `INSERT INTO "gateway"."mcp_stream_event" ("stream_id", "session_hash", "message") VALUES ($1, $2, $3::jsonb) RETURNING "id"::text AS id`,
            [streamId, sessionHash, JSON.stringify(message)],
          );
          return `${streamId}_${(rows[0] as { id: string }).id}`;
        },
        async getStreamIdForEventId(eventId) {
          const parsed = parseEventId(eventId);
          if (!parsed) return undefined;
          const { rows } = await exec(`SELECT 1 FROM "gateway"."mcp_stream_event" WHERE "stream_id" = $1 AND "session_hash" = $2 LIMIT 1`, [
            parsed.streamId,
            sessionHash,
          ]);
          return rows.length > 0 ? parsed.streamId : undefined;
        },
        async replayEventsAfter(lastEventId, { send }) {
          const events = await after(sessionHash, lastEventId);
          if (!events) throw new Error('unknown Last-Event-ID');
          for (const e of events) await send(e.id, e.message);
          return parseEventId(lastEventId)!.streamId;
        },
      };
    },
    after,
    async sweep(now) {
      await exec(`DELETE FROM "gateway"."mcp_stream_event" WHERE "created_at" < $1`, [new Date(now.getTime() - STREAM_EVENT_TTL_MS)]);
    },
  };

  async function after(sessionHash: string, lastEventId: string): Promise<StoredEvent[] | undefined> {
    const parsed = parseEventId(lastEventId);
    if (!parsed) return undefined;
    // The named event itself must be this session's: a guessed stream id of another session replays nothing.
    const { rows } = await exec(
      `SELECT "id"::text AS id, "message" FROM "gateway"."mcp_stream_event"
       WHERE "stream_id" = $1 AND "session_hash" = $2 AND "id" >= $3::bigint ORDER BY "id"`,
      [parsed.streamId, sessionHash, parsed.seq],
    );
    const list = rows as { id: string; message: JSONRPCMessage | string }[];
    if (list[0]?.id !== parsed.seq) return undefined;
    return list
      .slice(1)
      .map((r) => ({ id: `${parsed.streamId}_${r.id}`, message: (typeof r.message === 'string' ? JSON.parse(r.message) : r.message) as JSONRPCMessage }))
      .filter((e) => Object.keys(e.message).length > 0); // priming events are `{}`
  }
}
