import Type from 'typebox';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { authenticateClient, registerClient } from '../domain/oauth/clients.ts';
import { revokeToken } from '../domain/oauth/tokens.ts';
import { OAuthError } from '../domain/oauth-error.ts';
import { createRateLimiter } from '@flowdesk/service-kit';

const RevokeBody = Type.Object({ token: Type.Optional(Type.String()), token_type_hint: Type.Optional(Type.String()) }, { additionalProperties: Type.String() });

/** What OAuth clients call about themselves: dynamic registration (RFC 7591) and revocation (RFC 7009). */
export function oauthClientRoutes(ctx: AuthContext) {
  const perAddress = createRateLimiter(ctx.registrationRateLimit, ctx.now);
  // One ceiling over every address, far above one address's share: a flood from many addresses
  // cannot fill the client table, and no single caller can use the ceiling up for everyone else.
  const overall = createRateLimiter(ctx.registrationGlobalRateLimit, ctx.now);
  return async (app: Service) => {
    app.post(
      '/oauth/register',
      {
        bodyLimit: 16 * 1024,
        // Counted before the body is read, so a flood costs us nothing but the counter.
        // request.ip is the real client address behind the front once the service kit trusts the proxy.
        onRequest: async (req) => {
          const wait = perAddress.hit(req.ip);
          if (wait > 0)
            throw new OAuthError(429, 'rate_limited', `Too many client registrations from this address; retry in ${wait} s`, { 'retry-after': String(wait) });
          const busy = overall.hit('all');
          if (busy > 0)
            throw new OAuthError(429, 'rate_limited', `Too many client registrations right now; retry in ${busy} s`, { 'retry-after': String(busy) });
        },
        schema: { body: Type.Object({}, { additionalProperties: true }) },
      },
      async (req, reply) => {
        const registered = await registerClient(ctx.prisma, req.body, ctx.now());
        reply.header('cache-control', 'no-store');
        return reply.code(201).send(registered);
      },
    );

    app.post('/oauth/revoke', { schema: { body: RevokeBody } }, async (req, reply) => {
      const body = req.body as Record<string, string | undefined>;
      const client = await authenticateClient(ctx.prisma, req.headers.authorization, body);
      if (!body.token) throw new OAuthError(400, 'invalid_request', 'token is required');
      await revokeToken(ctx.prisma, client, body.token, ctx.now(), ctx.revoked);
      reply.header('cache-control', 'no-store');
      return reply.code(200).send({});
    });
  };
}
