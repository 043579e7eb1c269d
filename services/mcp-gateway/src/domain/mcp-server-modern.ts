import { Server, type CacheHint } from '@modelcontextprotocol/server';
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

// One validator for every per-request Server (left out, each Server builds its own).
const validator = new AjvJsonSchemaValidator();

/**
 * A low-level SDK 2.x Server for one 2026-07-28 request (routes/mcp.ts hands it to the SDK's
 * createMcpHandler, which owns the envelope, server/discover and the standard headers). The same
 * handlers as the sessionful path (mcp-server.ts), so tools, resources, prompts and errors match.
 */
export function buildModernMcpServer(ctx: Omit<CallContext, 'protocolVersion'>, onError: (err: unknown) => void): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
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
  return server;
}
