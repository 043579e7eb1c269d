import { MCP_PATH } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import { PROTECTED_RESOURCE_METADATA_PATH } from './well-known.ts';

/**
 * What a browser MCP client sends besides the CORS-safelisted headers: the bearer token, the JSON
 * body's type, the protocol version and session id (2025-03-26 on), the SSE resumption id, and the
 * standard request headers of SEP-2243 that 2026 clients send on every request (`Mcp-Method`, and
 * `Mcp-Name` for tools/call, prompts/get, resources/read). `Mcp-Param-*` headers are sent only for
 * tool parameters declared with `x-mcp-header`, which no Flowdesk tool declares.
 */
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID';
/** What its script may read from our answers: the session id, the OAuth challenge, and when to retry (429, 503). */
export const CORS_EXPOSED_HEADERS = 'Mcp-Session-Id, WWW-Authenticate, Retry-After';
const METHODS = 'GET, POST, DELETE, OPTIONS';
const PATHS = [MCP_PATH, PROTECTED_RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource'];

/**
 * CORS for browser-based MCP clients on the origins of MCP_CORS_ORIGINS (docs/mcp-gateway.md, "CORS").
 * Only listed origins get the CORS headers; the Origin check of the MCP route (DNS-rebinding
 * protection) admits them too. A preflight from any other origin gets 403 without CORS headers, so
 * the browser refuses the request.
 */
export function corsRoutes(corsOrigins: ReadonlySet<string>) {
  return async (app: Service) => {
    app.addHook('onRequest', async (req, reply) => {
      const origin = req.headers.origin;
      if (origin === undefined || !corsOrigins.has(origin.toLowerCase())) return;
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
      reply.header('vary', 'Origin');
    });
    for (const path of PATHS) {
      app.options(path, async (req, reply) => {
        const origin = req.headers.origin;
        if (origin === undefined || !corsOrigins.has(origin.toLowerCase())) {
          return reply.code(403).send({ error: 'forbidden', message: 'Origin not allowed: add it to MCP_CORS_ORIGINS' });
        }
        return reply
          .code(204)
          .header('access-control-allow-methods', METHODS)
          .header('access-control-allow-headers', CORS_ALLOWED_HEADERS)
          .header('access-control-max-age', '600')
          .send();
      });
    }
  };
}
