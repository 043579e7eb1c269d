import Type from 'typebox';
import { ConnectedAppList, ErrorBody, IdParams, type ConnectedApp } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { listApiKeys, revokeApiKey } from '../domain/api-keys.ts';
import { disconnectGrant, listGrants } from '../domain/oauth/grants.ts';
import { credentialOf, requireUserKey } from './user-credential.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

/**
 * Settings → Connected Apps: everything that can act for the user: API keys, and OAuth clients with
 * their grant (type 'oauth_client', id = the grant's). Revoke and Disconnect are one DELETE; a
 * Disconnect revokes the grant, and so every token issued under it, at once.
 */
export function connectedAppRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    app.get(
      '/connected-apps',
      {
        onRequest: requireUserKey(ctx, 'read'),
        schema: { tags: ['connected-apps'], summary: 'API keys and OAuth clients that can act for you', response: { 200: ConnectedAppList, ...errors } },
      },
      async (req) => {
        const userId = credentialOf(req).userId;
        const [keys, grants] = await Promise.all([listApiKeys(ctx.prisma, userId), listGrants(ctx.prisma, userId)]);
        const items: ConnectedApp[] = [
          ...grants.map((g): ConnectedApp => ({
            id: g.grantId,
            type: 'oauth_client',
            name: g.clientName,
            scope: g.scope,
            createdAt: g.createdAt.toISOString(),
            lastUsedAt: g.lastUsedAt?.toISOString() ?? null,
          })),
          ...keys.map((k): ConnectedApp => ({ id: k.id, type: 'api_key', name: k.name, scope: k.scope, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt })),
        ].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
        return { items };
      },
    );

    app.delete(
      '/connected-apps/:id',
      {
        onRequest: requireUserKey(ctx, 'write'),
        schema: {
          tags: ['connected-apps'],
          summary: 'Revoke a key or disconnect an OAuth client (every token of its grant)',
          params: IdParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (req, reply) => {
        const userId = credentialOf(req).userId;
        const now = ctx.now();
        const grant = await disconnectGrant(ctx.prisma, userId, req.params.id, now);
        if (grant) {
          await ctx.revoked({ userId, kind: 'oauth_grant', clientId: grant.clientId, revokedAt: now });
        } else {
          await revokeApiKey(ctx.prisma, userId, req.params.id, now);
          await ctx.revoked({ userId, kind: 'api_key', clientId: req.params.id, revokedAt: now });
        }
        return reply.code(204).send(null);
      },
    );
  };
}
