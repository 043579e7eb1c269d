import { SCOPES } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { CLIENT_AUTH_METHODS, GRANT_TYPES } from '../domain/oauth/clients.ts';
import { toPublicJwk } from '../domain/jwks.ts';

/**
 * RFC 8414 authorization server metadata. Every URL is built from PUBLIC_BASE_URL, never from the
 * request's Host header (a forged Host would otherwise send clients' codes elsewhere). The
 * protected resource metadata (RFC 9728) is the gateway's, not ours.
 */
export function authorizationServerMetadata(ctx: Pick<AuthContext, 'publicBaseUrl'>) {
  const base = ctx.publicBaseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    introspection_endpoint: `${base}/oauth/introspect`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    // Introspection is for our services only (HTTP Basic with a service secret).
    introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
    // RFC 9207: the redirect carries `iss`, so a client talking to several servers can tell them apart.
    authorization_response_iss_parameter_supported: true,
    // A client_id may be the https URL of the client's metadata document (domain/oauth/client-metadata.ts).
    client_id_metadata_document_supported: true,
  };
}

/** Discovery documents: the authorization server metadata (under both names clients look for) and the JWKS. */
export function wellKnownRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    const jwks = { keys: [toPublicJwk(ctx.signingKeys)] };
    app.get('/.well-known/jwks.json', async (_req, reply) => {
      // Verifiers may cache it briefly; a rotation publishes the next key before signing with it.
      reply.header('cache-control', 'public, max-age=300');
      return jwks;
    });

    const metadata = authorizationServerMetadata(ctx);
    app.get('/.well-known/oauth-authorization-server', async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return metadata;
    });
    // Clients that only know OpenID Connect discovery look here (the MCP authorization spec has them
    // try both). The two members OIDC makes mandatory are added so those clients parse it; there is
    // no `openid` scope, so no ID token is ever issued.
    const openid = { ...metadata, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['EdDSA'] };
    app.get('/.well-known/openid-configuration', async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return openid;
    });
  };
}
