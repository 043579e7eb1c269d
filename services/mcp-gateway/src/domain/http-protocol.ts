import { MCP_DEFAULT_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION, MCP_SUPPORTED_PROTOCOL_VERSIONS } from '@flowdesk/contracts';

/** Media ranges of an Accept header with their q values, in the order given. */
function acceptRanges(accept: string | undefined): { type: string; q: number; index: number }[] {
  if (!accept) return [];
  return accept.split(',').map((part, index) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const value = q ? Number(q.slice(2)) : 1;
    return { type, q: Number.isFinite(value) ? value : 0, index };
  });
}

const qOf = (ranges: ReturnType<typeof acceptRanges>, type: string) => ranges.find((r) => r.type === type && r.q > 0);

/** MCP Streamable HTTP: a POST must accept both JSON and SSE (406 otherwise). */
export function acceptsBoth(accept: string | undefined): boolean {
  const r = acceptRanges(accept);
  return Boolean(qOf(r, 'application/json') && qOf(r, 'text/event-stream'));
}

/**
 * JSON unless the client prefers SSE: a higher q for text/event-stream, or the same q and listed
 * first. The SDK client sends "application/json, text/event-stream" and gets JSON.
 */
export function prefersSse(accept: string | undefined): boolean {
  const r = acceptRanges(accept);
  const sse = qOf(r, 'text/event-stream');
  const json = qOf(r, 'application/json');
  if (!sse) return false;
  if (!json) return true;
  return sse.q > json.q || (sse.q === json.q && sse.index < json.index);
}

export const isJsonContentType = (ct: string | undefined) => (ct ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';

/** The header's version, the default when absent, or undefined when we do not speak it. */
export function requestProtocolVersion(header: string | undefined): string | undefined {
  const v = header?.trim() || MCP_DEFAULT_PROTOCOL_VERSION;
  return (MCP_SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v) ? v : undefined;
}

/** What initialize answers: the client's version when we support it, else ours (the client may then disconnect). */
export const negotiateVersion = (requested: unknown) =>
  typeof requested === 'string' && (MCP_SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : MCP_PROTOCOL_VERSION;

/** DNS-rebinding protection: a browser's Origin must be one we serve; clients without one are not browsers. */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  return allowed.has(origin.toLowerCase());
}

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

/** Why one message is not JSON-RPC 2.0 we accept, or undefined when it is. */
function messageProblem(m: unknown): string | undefined {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return 'expected a JSON-RPC 2.0 message (an object)';
  const msg = m as Record<string, unknown>;
  if (msg.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in msg) {
    if (typeof msg.method !== 'string') return 'method must be a string';
    // A request's id is a string or a number (MCP forbids null); a notification has none.
    if ('id' in msg && typeof msg.id !== 'string' && typeof msg.id !== 'number') return 'id must be a string or a number (null is not allowed)';
    if ('params' in msg && (msg.params === null || typeof msg.params !== 'object' || Array.isArray(msg.params))) return 'params must be an object';
    return undefined;
  }
  return 'result' in msg || 'error' in msg ? undefined : 'expected a request (method), a response (result) or an error';
}

/** The body as JSON-RPC messages, or undefined when it is not JSON-RPC 2.0 as MCP uses it. */
export function asMessages(body: unknown): JsonRpcMessage[] | undefined {
  const list = Array.isArray(body) ? body : [body];
  if (list.length === 0) return undefined;
  return list.every((m) => messageProblem(m) === undefined) ? (list as JsonRpcMessage[]) : undefined;
}

/** For the -32600 answer when asMessages refused the body. */
export function invalidMessageReason(body: unknown): string {
  const list = Array.isArray(body) ? body : [body];
  if (list.length === 0) return 'an empty batch';
  for (const m of list) {
    const problem = messageProblem(m);
    if (problem) return problem;
  }
  return 'expected a JSON-RPC 2.0 message';
}

export type JsonRpcId = string | number | null;

/** An HTTP-level JSON-RPC error; `id` is the request's when it is known (one request with a string or number id), else null. */
export const jsonRpcError = (code: number, message: string, id: JsonRpcId = null) => ({ jsonrpc: '2.0' as const, error: { code, message }, id });

/** The id of the one request in a parsed body, or null (a batch, a notification, no usable id). */
export function requestIdOf(body: unknown): JsonRpcId {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** requestIdOf for a body not parsed yet (the 406/415 answers come before parsing): best effort, null when it is not JSON. */
export function requestIdOfText(text: unknown): JsonRpcId {
  if (typeof text !== 'string' || text === '') return null;
  try {
    return requestIdOf(JSON.parse(text));
  } catch {
    return null;
  }
}

/**
 * The SDK's McpError puts "MCP error <code>: " in front of its message, and the Server sends that
 * message as the JSON-RPC error's; a client SDK adds the prefix again on its side, so users saw
 * "MCP error -32602: MCP error -32602: Invalid arguments…". The message on the wire is without it.
 */
export function withoutSdkErrorPrefix<T>(message: T): T {
  const error = (message as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (!error || typeof error.message !== 'string') return message;
  const prefix = `MCP error ${String(error.code)}: `;
  if (!error.message.startsWith(prefix)) return message;
  return { ...message, error: { ...error, message: error.message.slice(prefix.length) } };
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? 'a string' : typeof v);

/**
 * The params of a tools/call the SDK would refuse with a validator dump: said plainly instead
 * (answered -32602 by the route). Undefined when the shape is right.
 */
export function toolCallParamsProblem(m: JsonRpcMessage): string | undefined {
  if (m.method !== 'tools/call') return undefined;
  const params = m.params;
  if (!params) return 'Invalid params: tools/call needs params with name and arguments';
  if (typeof params.name !== 'string' || params.name === '') return `Invalid params: name must be the tool's name (a string), got ${kindOf(params.name)}`;
  const args = params.arguments;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    return `Invalid params: arguments must be an object of the tool's parameters (e.g. {"projectId": "…"}), got ${kindOf(args)}`;
  }
  return undefined;
}
