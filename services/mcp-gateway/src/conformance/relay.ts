import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcMessage } from '../domain/http-protocol.ts';

const isResponse = (m: JsonRpcMessage) => m.method === undefined && m.id !== undefined && m.id !== null && ('result' in m || 'error' in m);
const key = (sessionId: string, id: string | number) => `${sessionId}\n${typeof id}:${id}`;

/**
 * Routes a client's answer to a server-initiated request (sampling/createMessage,
 * elicitation/create) to the request that asked. Each HTTP request runs its own stateless SDK
 * transport, and the answer arrives on a later POST; this maps (session, JSON-RPC id) to the
 * transport still streaming the waiting tool call. In process memory: it holds only while both POSTs
 * reach the same process, which conformance mode (one loopback process) guarantees and production
 * replicas would not — production sends no server-initiated requests.
 */
export class ResponseRelay {
  private readonly waiting = new Map<string, Transport>();

  /** Records the requests `transport` sends for `sessionId`; returns the untrack function (on close). */
  track(sessionId: string, transport: Transport): () => void {
    const mine = new Set<string>();
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const m = message as JsonRpcMessage;
      if (m.method !== undefined && m.id !== undefined && m.id !== null) {
        const k = key(sessionId, m.id);
        mine.add(k);
        this.waiting.set(k, transport);
      }
      return send(message, options);
    };
    return () => {
      for (const k of mine) if (this.waiting.get(k) === transport) this.waiting.delete(k);
    };
  }

  /**
   * Hands `messages` to the transports waiting for them when every one is an answer to a request of
   * this session; false (nothing delivered) otherwise, and the POST takes the usual path.
   */
  deliver(sessionId: string, messages: readonly JsonRpcMessage[]): boolean {
    if (!messages.every(isResponse)) return false;
    const targets = messages.map((m) => this.waiting.get(key(sessionId, m.id!)));
    if (targets.some((t) => t === undefined)) return false;
    messages.forEach((m, i) => {
      this.waiting.delete(key(sessionId, m.id!));
      targets[i]!.onmessage?.(m as JSONRPCMessage);
    });
    return true;
  }
}
