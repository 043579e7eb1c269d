import formbody from '@fastify/formbody';
import type { FastifyError, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { TOKEN_EXCHANGE_GRANT, type Introspection } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { authenticateApiKey, grantedScopes } from '../domain/api-keys.ts';
import { invalidClient, OAuthError } from '../domain/oauth-error.ts';
import { authenticateService, parseBasicAuth } from '../domain/service-clients.ts';
import { exchangeToken } from '../domain/token-exchange.ts';

const IntrospectBody = Type.Object({ token: Type.String(), token_type_hint: Type.Optional(Type.String()) });
// Loose on purpose: which parameters a token request needs depends on its grant type (RFC 6749 §3.2).
const TokenBody = Type.Object({ grant_type: Type.String() }, { additionalProperties: Type.String() });

/**
 * The OAuth endpoints other services call (introspection, token exchange). Form-encoded bodies and
 * RFC 6749 §5.2 error bodies here, unlike the JSON API; the OAuth slice adds authorize, the code and
 * refresh grants, registration and revocation next to them.
 */
export function oauthRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    await app.register(formbody);

    app.setErrorHandler((err: FastifyError | OAuthError, req, reply) => {
      reply.header('cache-control', 'no-store');
      if (err instanceof OAuthError) {
        req.log.info({ status: err.statusCode, error: err.error }, err.message);
        return reply.code(err.statusCode).headers(err.headers).send(err.toBody());
      }
      const status = err.validation ? 400 : err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status >= 500) {
        req.log.error({ err }, 'request failed');
        return reply.code(500).send({ error: 'server_error', error_description: 'Internal server error' });
      }
      return reply.code(status).send({ error: 'invalid_request', error_description: err.message });
    });

    /** Which configured service is calling; anyone else gets 401 before the body is even read. */
    const serviceOf = (req: FastifyRequest) => {
      const id = authenticateService(ctx.serviceClients, parseBasicAuth(req.headers.authorization));
      if (!id) throw invalidClient();
      return id;
    };

    // RFC 7662. Anything that is not a working credential is just `active: false`: the caller learns
    // nothing about why (unknown, revoked, malformed look the same).
    app.post(
      '/oauth/introspect',
      { onRequest: async (req) => void serviceOf(req), schema: { body: IntrospectBody } },
      async (req, reply): Promise<Introspection> => {
        reply.header('cache-control', 'no-store');
        const key = await authenticateApiKey(ctx.prisma, req.body.token, ctx.now());
        if (!key) return { active: false };
        return {
          active: true,
          sub: key.userId,
          scope: grantedScopes(key.scope),
          client_id: key.keyId,
          token_type: 'api_key',
          iat: Math.floor(key.createdAt.getTime() / 1000),
        };
      },
    );

    app.post('/oauth/token', { schema: { body: TokenBody } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const body = req.body as Record<string, string>;
      if (body.grant_type !== TOKEN_EXCHANGE_GRANT) {
        throw new OAuthError(400, 'unsupported_grant_type', `grant_type must be ${TOKEN_EXCHANGE_GRANT}`);
      }
      const serviceId = serviceOf(req);
      if (!body.subject_token || !body.subject_token_type) {
        throw new OAuthError(400, 'invalid_request', 'subject_token and subject_token_type are required');
      }
      return exchangeToken(
        { prisma: ctx.prisma, signingKeys: ctx.signingKeys, userIdExchangeClients: ctx.userIdExchangeClients, now: ctx.now() },
        { serviceId, subjectToken: body.subject_token, subjectTokenType: body.subject_token_type, audience: body.audience, scope: body.scope },
      );
    });
  };
}
