import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { MissingRequiredClientCapabilityError, Server as ModernServer, type ServerContext } from '@modelcontextprotocol/server';
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
 * The diagnostic tools of the `server-stateless` scenario (SEP-2575), 2026-07-28 only:
 * `test_missing_capability` needs the client's `sampling` capability and answers -32021 (HTTP 400)
 * when the request does not declare it; `test_logging_tool` logs only at a level the request set in
 * `_meta` (it never sets one here, so it sends no notifications/message); `test_streaming_elicitation`
 * answers on its own stream without any server→client request (this path sends none).
 */
const DIAGNOSTIC_TOOLS = [
  {
    name: 'test_missing_capability',
    description: 'Needs the client sampling capability (SEP-2575 diagnostics)',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'test_logging_tool',
    description: 'Logs only at the log level the request sets in _meta (SEP-2575 diagnostics)',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'test_streaming_elicitation',
    description: 'Answers on its stream without server-to-client requests (SEP-2575 diagnostics)',
    inputSchema: { type: 'object', properties: {} },
  },
];

function diagnosticCall(name: string, ctx: ServerContext): { content: { type: 'text'; text: string }[] } | undefined {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const capabilities = (envelope['io.modelcontextprotocol/clientCapabilities'] ?? {}) as Record<string, unknown>;
  switch (name) {
    case 'test_missing_capability':
      if (!capabilities.sampling) {
        throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } }, 'test_missing_capability needs the sampling capability');
      }
      return { content: [{ type: 'text', text: 'The client declared sampling.' }] };
    case 'test_logging_tool':
      return { content: [{ type: 'text', text: 'No log level was set for this request, so nothing was logged.' }] };
    case 'test_streaming_elicitation':
      return { content: [{ type: 'text', text: 'Answered without a server-to-client request on the stream.' }] };
  }
  return undefined;
}

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
      (async (request: { params?: { name?: string } }, ctx: ServerContext) => {
        if (method === 'tools/call') {
          const answer = diagnosticCall(String(request.params?.name), ctx);
          if (answer) return answer;
        }
        const result = await handler(request, {
          signal: ctx.mcpReq.signal,
          requestId: ctx.mcpReq.id,
          _meta: ctx.mcpReq._meta,
          sendNotification: (n: Parameters<ServerContext['mcpReq']['notify']>[0]) => ctx.mcpReq.notify(n),
          sendRequest: () => Promise.reject(new Error('server-to-client requests are not available on the 2026-07-28 path')),
        });
        return method === 'tools/list'
          ? { ...(result as { tools: unknown[] }), tools: [...(result as { tools: unknown[] }).tools, ...DIAGNOSTIC_TOOLS] }
          : result;
      }) as never,
    );
  }
  serveTaskMethods(server);
  return server;
}
