import type { FastifyRequest } from 'fastify';
import { HttpError, allows, insufficientScopeMessage, type Access } from '@flowdesk/contracts';
import type { AuthContext } from '../context.ts';
import { authenticateApiKey, grantedScopes, type AuthenticatedKey } from '../domain/api-keys.ts';

const credentials = new WeakMap<FastifyRequest, AuthenticatedKey>();

/** The key the request was authenticated with (set by requireUserKey). */
export function credentialOf(req: FastifyRequest): AuthenticatedKey {
  const key = credentials.get(req);
  if (!key) throw new Error('route is missing requireUserKey');
  return key;
}

const CHALLENGE = 'Bearer realm="flowdesk"';

/**
 * onRequest hook for the key-management API: the user authenticates with one of their own API keys
 * (`Authorization: Bearer fdk_...`). Runs before the body is parsed, so an anonymous caller learns
 * nothing from validation errors. A read key may look, only a write key may create or revoke: a read
 * key that could mint a write key would be a write key.
 */
export function requireUserKey(ctx: AuthContext, access: Access) {
  return async (req: FastifyRequest) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new HttpError('unauthorized', 'Missing bearer token: send Authorization: Bearer <API key>', { 'www-authenticate': CHALLENGE });
    const key = await authenticateApiKey(ctx.prisma, match[1]!, ctx.now());
    if (!key) throw new HttpError('unauthorized', 'Invalid or revoked API key', { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` });
    if (!allows(grantedScopes(key.scope), access)) {
      throw new HttpError('forbidden', insufficientScopeMessage(access), {
        'www-authenticate': `${CHALLENGE}, error="insufficient_scope", scope="mcp:write"`,
      });
    }
    credentials.set(req, key);
  };
}
