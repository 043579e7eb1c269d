import formbody from '@fastify/formbody';
import type { FastifyError, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { CONSOLE_SERVICE_CLIENT, CONSOLE_SESSION_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT, type Introspection } from '@flowdesk/contracts';
import { authenticateSession, looksLikeSessionToken } from '../domain/sessions.ts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { authenticateApiKey, grantedScopes } from '../domain/api-keys.ts';
import { invalidClient, OAuthError } from '../domain/oauth-error.ts';
import { authenticateService, parseBasicAuth } from '../domain/service-clients.ts';
import { exchangeToken, serviceToken } from '../domain/token-exchange.ts';
import { authenticateClient } from '../domain/oauth/clients.ts';
import { authenticateAccessToken, redeemAuthorizationCode, refreshTokens, requestStepUp } from '../domain/oauth/tokens.ts';
import { normalizeRequestedScope } from '../domain/oauth/policy.ts';
import { looksLike } from '../domain/oauth/secrets.ts';
import { authorizeRoutes } from './oauth-authorize.ts';
import { oauthClientRoutes } from './oauth-clients.ts';

const IntrospectBody = Type.Object({ token: Type.String(), token_type_hint: Type.Optional(Type.String()) });
const StepUpBody = Type.Object({ token: Type.String(), scope: Type.String({ minLength: 1, maxLength: 200 }) });
// Loose on purpose: which parameters a token request needs depends on its grant type (RFC 6749 §3.2).
const TokenBody = Type.Object({ grant_type: Type.String() }, { additionalProperties: Type.String() });

/**
 * The /oauth/ endpoints: what other services call (introspection, token exchange) and the OAuth 2.1
 * authorization server (authorize, the code and refresh grants, registration, revocation).
 * Form-encoded bodies and RFC 6749 §5.2 error bodies here, unlike the JSON API.
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
        if (looksLikeSessionToken(req.body.token)) {
          // A console session is the console edge's business only: to any other service (the MCP
          // gateway, say) it is no credential at all.
          if (serviceOf(req) !== CONSOLE_SERVICE_CLIENT) return { active: false };
          const session = await authenticateSession(ctx.prisma, req.body.token, ctx.now(), ctx.sessionPolicy);
          if (!session) return { active: false };
          return {
            active: true,
            sub: session.user.id,
            scope: 'mcp:write',
            client_id: CONSOLE_SERVICE_CLIENT,
            token_type: CONSOLE_SESSION_TOKEN_TYPE,
            exp: Math.floor(Math.min(session.expiresAt.getTime(), session.idleExpiresAt.getTime()) / 1000),
            iat: Math.floor(session.createdAt.getTime() / 1000),
          };
        }
        if (looksLike('access', req.body.token)) {
          const token = await authenticateAccessToken(ctx.prisma, req.body.token, ctx.now());
          if (!token) return { active: false };
          return {
            active: true,
            sub: token.userId,
            scope: token.scope,
            client_id: token.clientId,
            token_type: 'Bearer',
            exp: Math.floor(token.expiresAt.getTime() / 1000),
            iat: Math.floor(token.issuedAt.getTime() / 1000),
            aud: token.audience,
          };
        }
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

    // MCP step-up (docs/auth.md): the gateway refused this access token with 403 insufficient_scope
    // for `scope`; the grant's next refresh is refused once so the client authorizes again. Only
    // our services call it; anything that is not a live OAuth access token lacking the scope is a no-op.
    app.post('/oauth/step-up', { onRequest: async (req) => void serviceOf(req), schema: { body: StepUpBody } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const recorded = await requestStepUp(ctx.prisma, req.body.token, normalizeRequestedScope(req.body.scope), ctx.now());
      return { recorded };
    });

    app.post('/oauth/token', { schema: { body: TokenBody } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const body = req.body as Record<string, string | undefined>;
      if (body.grant_type === 'authorization_code' || body.grant_type === 'refresh_token') {
        const client = await authenticateClient(ctx.prisma, req.headers.authorization, body);
        if (!client.grantTypes.includes(body.grant_type))
          throw new OAuthError(400, 'unauthorized_client', `This client did not register the ${body.grant_type} grant`);
        return body.grant_type === 'authorization_code'
          ? redeemAuthorizationCode(
              ctx.prisma,
              client,
              { code: body.code, redirectUri: body.redirect_uri, codeVerifier: body.code_verifier, resource: body.resource },
              ctx.now(),
              ctx.revoked,
            )
          : refreshTokens(ctx.prisma, client, { refreshToken: body.refresh_token, scope: body.scope, resource: body.resource }, ctx.now(), ctx.revoked);
      }
      if (body.grant_type === 'client_credentials') {
        // Only our own services, acting as themselves (e.g. webhook-ingest's trigger lookup). To a
        // registered OAuth client the grant does not exist (the metadata does not offer it).
        const claimed = parseBasicAuth(req.headers.authorization)?.clientId;
        if (!claimed || !Object.hasOwn(ctx.serviceClients, claimed)) {
          throw new OAuthError(400, 'unsupported_grant_type', 'client_credentials is only for Flowdesk services');
        }
        return serviceToken({ signingKeys: ctx.signingKeys, now: ctx.now() }, serviceOf(req), body.audience);
      }
      // No implicit, no password grant (RFC 9700 §2.4): anything else is unsupported.
      if (body.grant_type !== TOKEN_EXCHANGE_GRANT) {
        throw new OAuthError(
          400,
          'unsupported_grant_type',
          `grant_type must be authorization_code, refresh_token, client_credentials or ${TOKEN_EXCHANGE_GRANT}`,
        );
      }
      const serviceId = serviceOf(req);
      if (!body.subject_token || !body.subject_token_type) {
        throw new OAuthError(400, 'invalid_request', 'subject_token and subject_token_type are required');
      }
      return exchangeToken(
        {
          prisma: ctx.prisma,
          signingKeys: ctx.signingKeys,
          userIdExchangeClients: ctx.userIdExchangeClients,
          mcpResource: ctx.mcpResource,
          now: ctx.now(),
          sessionPolicy: ctx.sessionPolicy,
        },
        {
          serviceId,
          subjectToken: body.subject_token,
          subjectTokenType: body.subject_token_type,
          audience: body.audience,
          scope: body.scope,
          resource: body.resource,
        },
      );
    });

    await app.register(oauthClientRoutes(ctx));
    await app.register(authorizeRoutes(ctx));
  };
}
