/**
 * The AI step's remote MCP servers (docs/workflow-engine.md, "AI step", "Tools"): the official MCP
 * SDK's client over Streamable HTTP, whose every request goes through the engine's guarded HttpClient
 * (the SSRF guard, a time and size limit) by the transport's `fetch` option, with the server's
 * credential (a bearer or header one) on every request and never sent on to another origin. A step's
 * calls are request and answer, so the standalone GET stream is declined here (405, which the
 * protocol allows) and each POST's answer (JSON or an SSE stream the server ends) is read whole.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AI_LIMITS } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { HttpMethod } from '../ports.ts';
import type { ModelTool } from './ai-models.ts';
import type { NodeContext } from './node-handler.ts';

export interface McpServerInput {
  url: string;
  /** The credential's name (recorded). */
  credential?: string;
  /** The tools offered; empty: all. */
  tools: string[];
  /** Not recorded: what the credential adds (headers; query parameters go into the URL). */
  headers: Record<string, string>;
  query: Record<string, string>;
}

/** One connected server and its tools. */
export interface McpConnection {
  server: McpServerInput;
  client: Client;
  tools: { name: string; description?: string; inputSchema: Record<string, unknown> }[];
}

/** A tool as offered to the model: its unique name there, and where it lives. */
export interface OfferedTool extends ModelTool {
  connection: McpConnection;
  /** The tool's own name on its server. */
  remoteName: string;
}

const NULL_BODY = new Set([101, 204, 205, 304]);
const METHODS = new Set<HttpMethod>(['POST', 'DELETE']);

/** The transport's fetch: through the guarded client, within the step's time (deadline) and the size limit. */
export function guardedFetch(server: McpServerInput, ctx: NodeContext, deadline: number, signal: AbortSignal) {
  const credentialHeaders = Object.keys(server.headers);
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? 'GET').toUpperCase() as HttpMethod;
    // No standalone server stream: nothing of a step listens for server-initiated messages.
    if (!METHODS.has(method)) return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => void (headers[name] = value));
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new NodeFailedError('the AI step ran out of time before its MCP call');
    const res = await ctx.ports.http.send({
      method,
      url: String(url),
      headers: { ...headers, ...server.headers },
      credentialHeaders,
      credentialIn: [...credentialHeaders.map((h) => `header "${h}"`), ...(Object.keys(server.query).length ? ['the URL'] : [])],
      ...(typeof init?.body === 'string' ? { body: init.body } : {}),
      timeoutMs: remaining,
      maxBodyBytes: AI_LIMITS.maxMcpResponseBytes,
      signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
    });
    if (res.truncated) throw new NodeFailedError(`the MCP server ${safeOrigin(server.url)} answered more than ${AI_LIMITS.maxMcpResponseBytes} bytes`);
    return new Response(NULL_BODY.has(res.status) ? null : Buffer.from(res.body), { status: res.status, headers: res.headers });
  };
}

/** Connects to each server and lists its tools (all pages, within AI_LIMITS.maxTools in all). */
export async function connectServers(servers: McpServerInput[], ctx: NodeContext, deadline: number, signal: AbortSignal): Promise<McpConnection[]> {
  const connections: McpConnection[] = [];
  try {
    for (const server of servers) {
      const url = new URL(server.url);
      for (const [k, v] of Object.entries(server.query)) url.searchParams.set(k, v);
      const transport = new StreamableHTTPClientTransport(url, { fetch: guardedFetch(server, ctx, deadline, signal) });
      const client = new Client({ name: 'flowdesk-ai-step', version: '1.0.0' });
      const where = safeOrigin(server.url);
      try {
        await client.connect(transport, { signal, timeout: Math.max(deadline - Date.now(), 1) });
      } catch (err) {
        throw mcpError(`could not connect to the MCP server ${where}`, err);
      }
      const connection: McpConnection = { server, client, tools: [] };
      connections.push(connection);
      let cursor: string | undefined;
      let pages = 0;
      do {
        let page;
        try {
          page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: Math.max(deadline - Date.now(), 1) });
        } catch (err) {
          throw mcpError(`the MCP server ${where} did not list its tools`, err);
        }
        for (const t of page.tools) {
          if (server.tools.length && !server.tools.includes(t.name)) continue;
          connection.tools.push({ name: t.name, ...(t.description ? { description: t.description } : {}), inputSchema: t.inputSchema });
        }
        cursor = page.nextCursor;
      } while (cursor && ++pages < 20);
      const missing = server.tools.filter((name) => !connection.tools.some((t) => t.name === name));
      if (missing.length) throw new NodeFailedError(`the MCP server ${where} has no tool ${missing.map((n) => `"${n}"`).join(', ')}`);
    }
  } catch (err) {
    await closeAll(connections);
    throw err;
  }
  return connections;
}

/** The tools of every connection, each under a name unique across servers (the model's function names: ^[A-Za-z0-9_-]{1,64}$). */
export function offeredTools(connections: McpConnection[], reserved: readonly string[] = []): OfferedTool[] {
  const out: OfferedTool[] = [];
  const taken = new Set<string>(reserved);
  connections.forEach((connection, i) => {
    for (const t of connection.tools) {
      let name = t.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
      if (taken.has(name)) name = `s${i + 1}_${name}`.slice(0, 64);
      for (let n = 2; taken.has(name); n++) name = `${name.slice(0, 60)}_${n}`;
      taken.add(name);
      out.push({ name, ...(t.description ? { description: t.description } : {}), inputSchema: t.inputSchema, connection, remoteName: t.name });
    }
  });
  if (out.length > AI_LIMITS.maxTools)
    throw new NodeFailedError(`the MCP servers offer ${out.length} tools; at most ${AI_LIMITS.maxTools} (name the ones to offer in Tools)`);
  return out;
}

/** Calls one tool; its text content (and an error flag) as fed back to the model. */
export async function callTool(tool: OfferedTool, args: unknown, deadline: number, signal: AbortSignal): Promise<{ content: string; isError: boolean }> {
  const result = await tool.connection.client
    .callTool({ name: tool.remoteName, arguments: (args ?? {}) as Record<string, unknown> }, undefined, {
      signal,
      timeout: Math.max(deadline - Date.now(), 1),
    })
    .catch((err: unknown) => {
      throw mcpError(`the tool "${tool.remoteName}" of ${safeOrigin(tool.connection.server.url)} failed`, err);
    });
  const parts = (Array.isArray(result.content) ? result.content : []) as { type?: string; text?: string }[];
  let content = parts.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  if (!content && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent);
  return { content, isError: result.isError === true };
}

export async function closeAll(connections: McpConnection[]): Promise<void> {
  await Promise.allSettled(connections.map((c) => c.client.close()));
}

function mcpError(what: string, err: unknown): Error {
  // The guarded client's errors (SSRF refusal, timeout, network) keep their class for the retry policy and the message.
  const message = err instanceof Error ? err.message : String(err);
  return Object.assign(new NodeFailedError(`${what}: ${message}`), { cause: err });
}

/** The URL's origin, for messages (its path or query may hold a key). */
export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}
