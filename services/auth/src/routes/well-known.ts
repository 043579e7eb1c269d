import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { toPublicJwk } from '../domain/jwks.ts';

/** Discovery documents. For now the JWKS; the OAuth slice adds the server and resource metadata. */
export function wellKnownRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    const jwks = { keys: [toPublicJwk(ctx.signingKeys)] };
    app.get('/.well-known/jwks.json', async (_req, reply) => {
      // Verifiers may cache it briefly; a rotation publishes the next key before signing with it.
      reply.header('cache-control', 'public, max-age=300');
      return jwks;
    });
  };
}
