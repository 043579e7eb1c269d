import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, Server, type CacheHint } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { MCP_STATELESS_PROTOCOL_VERSION } from '@flowdesk/contracts';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS, mcpHandlers, type CallContext } from './mcp-server.ts';

/**
 * Cache hints of the 2026-07-28 list results (`ttlMs` / `cacheScope`). The catalogue is the same for
 * every caller and changes only with a deployment: public, 5 minutes. Reads are the caller's live
 * data: private and not cacheable (the SDK's default, `ttlMs: 0`).
 */
const LIST_HINT: CacheHint = { ttlMs: 300_000, cacheScope: 'public' };
export const MODERN_CACHE_HINTS = {
  'server/discover': LIST_HINT,
  'tools/list': LIST_HINT,
  'resources/list': LIST_HINT,
  'resources/templates/list': LIST_HINT,
  'prompts/list': LIST_HINT,
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const satisfies Record<string, CacheHint>;

/**
 * The tasks extension (SEP-2663). Flowdesk's tools all answer at once, so none ever creates a task
 * (creation is the server's choice): the extension is advertised, and its methods answer what the
 * revision requires of a server that holds no task — -32021 to a request whose client capabilities
 * do not declare the extension (SEP-2575 "Missing Required Capabilities", HTTP 400), else -32602 for
 * the unknown task id. Without this they were 404 -32601 (method not found).
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const TaskParams = z.looseObject({ taskId: z.unknown().optional(), _meta: z.record(z.string(), z.unknown()).optional() });

/** Server capabilities of the 2026-07-28 path: the catalogue's plus the tasks extension. */
export const withTasksExtension = <C extends object>(capabilities: C) => ({ ...capabilities, extensions: { [TASKS_EXTENSION]: {} } });

export function serveTaskMethods(server: Server): void {
  for (const method of TASK_METHODS) {
    server.setRequestHandler(method, { params: TaskParams }, (params, ctx) => {
      // The SDK lifts the envelope's keys out of `_meta` into ctx.mcpReq.envelope.
      const envelope = (ctx.mcpReq.envelope ?? params._meta ?? {}) as Record<string, unknown>;
      const declared = (envelope[CLIENT_CAPABILITIES_KEY] as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS_EXTENSION];
      if (declared === undefined) {
        throw new MissingRequiredClientCapabilityError(
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
          `${method} needs the ${TASKS_EXTENSION} extension in the request's client capabilities`,
        );
      }
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown task: ${typeof params.taskId === 'string' ? params.taskId : JSON.stringify(params.taskId ?? null)}`,
      );
    });
  }
}

// One validator for every per-request Server (left out, each Server builds its own).
const validator = new AjvJsonSchemaValidator();

/**
 * A low-level SDK 2.x Server for one 2026-07-28 request (routes/mcp.ts hands it to the SDK's
 * createMcpHandler, which owns the envelope, server/discover and the standard headers). The same
 * handlers as the sessionful path (mcp-server.ts), so tools, resources, prompts and errors match.
 */
export function buildModernMcpServer(ctx: Omit<CallContext, 'protocolVersion'>, onError: (err: unknown) => void): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: withTasksExtension(SERVER_CAPABILITIES),
    instructions: SERVER_INSTRUCTIONS,
    jsonSchemaValidator: validator,
    cacheHints: MODERN_CACHE_HINTS,
  });
  const h = mcpHandlers({ ...ctx, protocolVersion: MCP_STATELESS_PROTOCOL_VERSION }, onError);
  // The catalogue's JSON Schema types are wider than the SDK 2.x JSON-value types; the values are the same JSON.
  server.setRequestHandler('tools/list', () => h.listTools() as never);
  server.setRequestHandler('tools/call', (req) => h.callTool(req.params) as never);
  server.setRequestHandler('resources/list', h.listResources);
  server.setRequestHandler('resources/templates/list', h.listResourceTemplates);
  server.setRequestHandler('resources/read', (req) => h.readResource(req.params));
  server.setRequestHandler('prompts/list', h.listPrompts);
  server.setRequestHandler('prompts/get', (req) => h.getPrompt(req.params));
  serveTaskMethods(server);
  return server;
}
