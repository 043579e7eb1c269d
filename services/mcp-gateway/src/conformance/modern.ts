import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Server as ModernServer, type ServerContext } from '@modelcontextprotocol/server';
import { serveTaskMethods, withTasksExtension } from '../domain/mcp-server-modern.ts';

/** What a 2026-07-28 request may call on the fixtures (logging/setLevel and subscriptions are 2025 session features). */
const MODERN_METHODS = [
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
];

type LegacyHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The conformance fixtures on an SDK 2.x Server for the 2026-07-28 path: the handlers the 1.x
 * fixture server registered, called with a 1.x-shaped `extra` (progress notifications travel on the
 * request's own response). Server→client requests (sampling, elicitation mid-call) have no
 * 2026-07-28 equivalent here: those tools fail, as the fixtures' input_required tools are not built.
 * Conformance mode only (docs/mcp-gateway.md, "Conformance").
 */
export function buildModernFixtureServer(legacy: Server, onError: (err: unknown) => void): ModernServer {
  const handlers = (legacy as unknown as { _requestHandlers: Map<string, LegacyHandler> })._requestHandlers;
  const server = new ModernServer(
    { name: 'flowdesk-conformance', title: 'Flowdesk (conformance mode)', version: '1.0.0' },
    {
      capabilities: withTasksExtension({ tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, completions: {} }),
      instructions: 'Conformance fixtures of the MCP conformance suite; no Flowdesk data is reachable here.',
    },
  );
  server.onerror = onError;
  for (const method of MODERN_METHODS) {
    const handler = handlers.get(method);
    if (!handler) continue;
    server.setRequestHandler(
      method as 'tools/list',
      ((request: unknown, ctx: ServerContext) =>
        handler(request, {
          signal: ctx.mcpReq.signal,
          requestId: ctx.mcpReq.id,
          _meta: ctx.mcpReq._meta,
          sendNotification: (n: Parameters<ServerContext['mcpReq']['notify']>[0]) => ctx.mcpReq.notify(n),
          sendRequest: () => Promise.reject(new Error('server-to-client requests are not available on the 2026-07-28 path')),
        })) as never,
    );
  }
  serveTaskMethods(server);
  return server;
}
