import fastifyJwt from '@fastify/jwt';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  HttpError,
  INTERNAL_ISSUER,
  INTERNAL_JWT_ALGORITHM,
  allows,
  insufficientScopeMessage,
  type Access,
  type Identity,
  type InternalClaims,
} from '@flowdesk/contracts';

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
  interface FastifyInstance {
    /** preHandler: the caller must present a valid internal token allowing `access`. */
    requireAccess(access: Access): (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

export interface InternalAuthOptions {
  /** PEM public key(s) of the auth service's signing key; several during a key rotation. */
  publicKeyPem: string;
  /** This service's audience: tokens minted for another service are refused. */
  audience: string;
  /** Seconds of clock skew tolerated on exp/iat. */
  clockToleranceSeconds?: number;
}

/**
 * Verifies the short-lived internal JWT (EdDSA, issuer flowdesk-auth, audience = this service) on
 * every request that asks for it. A user's API key or OAuth token is never accepted here: it is
 * not a JWT signed by the internal key, so it fails verification like any forgery.
 */
export const internalAuth = fp<InternalAuthOptions>(
  async (app, opts) => {
    await app.register(fastifyJwt, {
      secret: { public: opts.publicKeyPem, private: 'verify-only' },
      verify: {
        algorithms: [INTERNAL_JWT_ALGORITHM],
        allowedIss: INTERNAL_ISSUER,
        allowedAud: opts.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'aud', 'iss'],
        clockTolerance: (opts.clockToleranceSeconds ?? 5) * 1000,
      },
    });
    app.decorateRequest('identity', null as unknown as Identity);
    app.decorate('requireAccess', (access: Access) => async (req: FastifyRequest) => {
      const header = req.headers.authorization;
      if (!header || !/^Bearer\s+\S+$/i.test(header)) {
        throw new HttpError('unauthorized', 'Missing bearer token');
      }
      let claims: InternalClaims;
      try {
        claims = await req.jwtVerify<InternalClaims>();
      } catch {
        throw new HttpError('unauthorized', 'Invalid or expired token');
      }
      if (typeof claims.sub !== 'string' || !/^[0-9a-f-]{36}$/i.test(claims.sub)) {
        throw new HttpError('unauthorized', 'Invalid token subject');
      }
      if (!allows(claims.scope, access)) {
        throw new HttpError('forbidden', insufficientScopeMessage(access));
      }
      req.identity = { userId: claims.sub, scope: claims.scope, azp: claims.azp, clientId: claims.client_id };
    });
  },
  { name: 'flowdesk-internal-auth' },
);
