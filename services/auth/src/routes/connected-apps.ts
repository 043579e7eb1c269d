import Type from 'typebox';
import { ConnectedAppList, ErrorBody, IdParams, type ConnectedApp } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { AuthContext } from '../context.ts';
import { listApiKeys, revokeApiKey } from '../domain/api-keys.ts';
import { credentialOf, requireUserKey } from './user-credential.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

/**
 * Settings → Connected Apps: everything that can act for the user. For now their API keys; the OAuth
 * slice adds clients (type 'oauth_client', Disconnect revokes all of a client's tokens).
 */
export function connectedAppRoutes(ctx: AuthContext) {
  return async (app: Service) => {
    app.get('/connected-apps', { onRequest: requireUserKey(ctx, 'read'), schema: { response: { 200: ConnectedAppList, ...errors } } }, async (req) => {
      const keys = await listApiKeys(ctx.prisma, credentialOf(req).userId);
      const items: ConnectedApp[] = keys.map((k) => ({ id: k.id, type: 'api_key', name: k.name, scope: k.scope, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt }));
      return { items };
    });

    app.delete(
      '/connected-apps/:id',
      { onRequest: requireUserKey(ctx, 'write'), schema: { params: IdParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await revokeApiKey(ctx.prisma, credentialOf(req).userId, req.params.id, ctx.now());
        return reply.code(204).send(null);
      },
    );
  };
}
