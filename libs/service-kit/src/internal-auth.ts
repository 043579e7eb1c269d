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
  serviceSubject,
} from '@flowdesk/contracts';

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
  interface FastifyInstance {
    /** preHandler: the caller must present a valid internal token allowing `access`. */
    requireAccess(access: Access): (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** preHandler: the caller must be one of these services acting as itself (a `svc:<id>` token). */
    requireService(...serviceIds: string[]): (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
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
    const verified = async (req: FastifyRequest): Promise<InternalClaims> => {
      const header = req.headers.authorization;
      if (!header || !/^Bearer\s+\S+$/i.test(header)) {
        throw new HttpError('unauthorized', 'Missing bearer token');
      }
      try {
        return await req.jwtVerify<InternalClaims>();
      } catch {
        throw new HttpError('unauthorized', 'Invalid or expired token');
      }
    };
    app.decorate('requireService', (...serviceIds: string[]) => async (req: FastifyRequest) => {
      const claims = await verified(req);
      const serviceId = claims.azp;
      if (!serviceId || claims.sub !== serviceSubject(serviceId)) {
        throw new HttpError('unauthorized', 'This route is for services, not users');
      }
      if (!serviceIds.includes(serviceId)) throw new HttpError('forbidden', `Service ${serviceId} may not call this route`);
      req.identity = { userId: '', scope: claims.scope, azp: serviceId, clientId: claims.client_id };
    });
    app.decorate('requireAccess', (access: Access) => async (req: FastifyRequest) => {
      const claims = await verified(req);
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
