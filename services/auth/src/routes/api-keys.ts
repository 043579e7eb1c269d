import Type from 'typebox';
import { ApiKeyList, CreateApiKey, CreatedApiKey, ErrorBody, IdParams } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { createApiKey, listApiKeys, revokeApiKey, scopeOfAccess } from '../domain/api-keys.ts';
import { credentialOf, requireUserKey } from './user-credential.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

/** Settings → API keys: create (secret shown once), list (never the secret), revoke. */
export function apiKeyRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    app.post(
      '/api-keys',
      {
        onRequest: requireUserKey(ctx, 'write'),
        schema: {
          tags: ['api-keys'],
          summary: 'Create an API key: Read (mcp:read) or Read + Write (mcp:write); the secret is in this answer only',
          body: CreateApiKey,
          response: { 201: CreatedApiKey, ...errors },
        },
      },
      async (req, reply) => {
        const { key, secret } = await createApiKey(ctx.prisma, { userId: credentialOf(req).userId, name: req.body.name, scope: scopeOfAccess(req.body.scope) });
        // The one answer that carries the secret: nothing may keep it.
        reply.header('cache-control', 'no-store');
        return reply.code(201).send({ ...key, secret });
      },
    );

    app.get(
      '/api-keys',
      {
        onRequest: requireUserKey(ctx, 'read'),
        schema: { tags: ['api-keys'], summary: 'List API keys (never their secrets)', response: { 200: ApiKeyList, ...errors } },
      },
      async (req) => ({
        items: await listApiKeys(ctx.prisma, credentialOf(req).userId),
      }),
    );

    app.delete(
      '/api-keys/:id',
      {
        onRequest: requireUserKey(ctx, 'write'),
        schema: {
          tags: ['api-keys'],
          summary: 'Revoke an API key (the next request with it gets 401)',
          params: IdParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (req, reply) => {
        const userId = credentialOf(req).userId;
        const now = ctx.now();
        await revokeApiKey(ctx.prisma, userId, req.params.id, now);
        await ctx.revoked({ userId, kind: 'api_key', clientId: req.params.id, revokedAt: now });
        return reply.code(204).send(null);
      },
    );
  };
}
