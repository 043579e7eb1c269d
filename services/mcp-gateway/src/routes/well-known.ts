import { MCP_PATH, SCOPES } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';

export const PROTECTED_RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/**
 * RFC 9728 Protected Resource Metadata for the MCP endpoint, at the path-suffixed location MCP
 * clients derive from the endpoint URL and at the bare one older clients try.
 */
export function wellKnownRoutes(publicBaseUrl: string) {
  const metadata = {
    resource: `${publicBaseUrl}${MCP_PATH}`,
    authorization_servers: [publicBaseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Flowdesk MCP server',
  };
  return async (app: Service) => {
    for (const path of [PROTECTED_RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource']) {
      app.get(path, async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=3600');
        // Browser-based clients (MCP Inspector) read it cross-origin: the origins of MCP_CORS_ORIGINS
        // get their CORS headers from routes/cors.ts, like the MCP endpoint; no other origin does.
        return metadata;
      });
    }
  };
}
