import type { Service } from '@flowdesk/service-kit';

/**
 * The endpoints a browser-based MCP client calls itself (with fetch) during its OAuth sign-in:
 * discovery, dynamic client registration, token and revocation. Not /oauth/authorize (a top-level
 * navigation, where CORS does not apply) and nothing under /auth/v1 (the console's session API).
 */
export const OAUTH_CORS_PATHS = [
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
  '/.well-known/jwks.json',
  '/oauth/register',
  '/oauth/token',
  '/oauth/revoke',
] as const;
/** Besides the CORS-safelisted ones: client authentication, JSON bodies (registration), and the header the MCP SDKs send on discovery. */
export const OAUTH_CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, MCP-Protocol-Version';
const METHODS = 'GET, POST, OPTIONS';
const PATHS = new Set<string>(OAUTH_CORS_PATHS);

/**
 * CORS for the origins of MCP_CORS_ORIGINS (the same browser MCP clients the gateway answers) on
 * OAUTH_CORS_PATHS (docs/auth.md, "CORS"). A listed origin gets Access-Control-Allow-Origin on every
 * answer of those paths, errors included, and a 204 preflight; any other origin gets no CORS header
 * (a preflight: 403), so the browser keeps the answer from its script.
 */
export function oauthCorsRoutes(corsOrigins: readonly string[]) {
  const allowed = new Set(corsOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const allows = (origin: string | undefined): origin is string => origin !== undefined && allowed.has(origin.toLowerCase());
  return async (app: Service) => {
    app.addHook('onRequest', async (req, reply) => {
      const path = req.url.split('?', 1)[0] ?? '';
      if (!PATHS.has(path)) return;
      // Caches keep one answer per Origin (with or without the CORS headers).
      reply.header('vary', 'Origin');
      if (!allows(req.headers.origin)) return;
      reply.header('access-control-allow-origin', req.headers.origin);
      reply.header('access-control-expose-headers', 'WWW-Authenticate, Retry-After');
    });
    for (const path of OAUTH_CORS_PATHS) {
      app.options(path, async (req, reply) => {
        if (!allows(req.headers.origin)) {
          return reply.code(403).send({ error: 'forbidden', message: 'Origin not allowed: add it to MCP_CORS_ORIGINS' });
        }
        return reply
          .code(204)
          .header('access-control-allow-methods', METHODS)
          .header('access-control-allow-headers', OAUTH_CORS_ALLOWED_HEADERS)
          .header('access-control-max-age', '600')
          .send();
      });
    }
  };
}
