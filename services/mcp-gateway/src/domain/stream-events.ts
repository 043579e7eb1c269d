/**
 * MCP SSE polling (2025-11-25, SEP-1699; docs/mcp-gateway.md, "SSE polling"). An SSE answer of a
 * session opens with a priming event (an event id, empty data, and `retry`), and every event on it is
 * stored under its stream before it is written. When the stream closes before the answer (the
 * client's connection dropped, or the server closed it to make a long call poll), the client
 * reconnects with `GET` and `Last-Event-ID` — to any replica — and gets the events after that id.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How long after its priming event a client waits before reconnecting (the SSE `retry` field), ms. */
export const SSE_RETRY_MS = 1_000;
/** A GET with Last-Event-ID waits this long for the answer before it closes (the client then reconnects). */
export const SSE_REPLAY_WAIT_MS = 10_000;
/** Stored events are swept this long after they were written. */
export const STREAM_EVENT_TTL_MS = 5 * 60_000;
/** A POST's SSE stream still without its answer after this long is closed: the client polls for it. */
export const DEFAULT_SSE_POLL_AFTER_MS = 25_000;

/** Event ids: `<stream id>_<sequence>`; the stream id is the SDK's (a UUID). */
const EVENT_ID = /^([0-9a-f-]{36})_([0-9]{1,19})$/;
export function parseEventId(eventId: string): { streamId: string; seq: string } | undefined {
  const m = EVENT_ID.exec(eventId);
  return m ? { streamId: m[1]!, seq: m[2]! } : undefined;
}

export interface StoredEvent {
  id: string;
  message: JSONRPCMessage;
}

/** Where the events live: the gateway's own table (adapters/stream-event-store.ts), shared by every replica. */
export interface StreamEvents {
  /** The SDK transport's event store for one session's answers. */
  forSession(sessionHash: string): EventStore;
  /**
   * The events after `lastEventId` on its stream (priming events left out), or undefined when the id
   * is malformed or names no stream of this session (another session's stream is never replayed).
   */
  after(sessionHash: string, lastEventId: string): Promise<StoredEvent[] | undefined>;
  /** Drops events older than STREAM_EVENT_TTL_MS. */
  sweep(now: Date): Promise<void>;
}

/** A message that answers a request (the end of a POST's stream). */
export const isAnswer = (m: JSONRPCMessage): boolean => 'id' in m && ('result' in m || 'error' in m);
