import fastifyJwt from '@fastify/jwt';
import fp from 'fastify-plugin';
import { createPublicKey } from 'node:crypto';
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
import { jwkThumbprint } from './internal-token.ts';

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
  /**
   * PEM public key(s) of the auth service's signing key: one, or several concatenated during a key
   * rotation (the next key is added before auth signs with it, the old one removed after its last
   * token expired). A token is verified with the key whose thumbprint is its `kid`.
   */
  publicKeyPem: string;
  /** This service's audience: tokens minted for another service are refused. */
  audience: string;
  /** Seconds of clock skew tolerated on exp/iat. */
  clockToleranceSeconds?: number;
  /** Verified tokens remembered (LRU) so a token is checked once, not per request; 0 turns it off. */
  verifiedCacheSize?: number;
}

/** One verified token: its claims, when it expires and the key that verified it. */
interface Verified {
  claims: InternalClaims;
  expiresAtMs: number;
  keyId: string;
}

/**
 * Verified internal tokens by token text, least recently used first (a Map keeps insertion order).
 * An Ed25519 verification costs about 125 µs of CPU and a hit 4–5 µs; a caller sends the same token
 * for its whole short life, so nearly every request is a hit. An entry is served only before the
 * token's exp and only while the key that verified it is still configured: a key removed from the
 * configuration (revoked) takes its tokens with it. The full token is the key, so a token differing
 * in any byte — another signature included — is verified afresh.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Verified>();

  constructor(
    private readonly maxEntries: number,
    private readonly keyConfigured: (keyId: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(token: string): InternalClaims | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (hit.expiresAtMs <= this.now() || !this.keyConfigured(hit.keyId)) {
      this.entries.delete(token);
      return undefined;
    }
    this.entries.delete(token);
    this.entries.set(token, hit);
    return hit.claims;
  }

  set(token: string, claims: InternalClaims, keyId: string): void {
    if (this.maxEntries <= 0 || typeof claims.exp !== 'number') return;
    const expiresAtMs = claims.exp * 1000;
    if (expiresAtMs <= this.now()) return;
    this.entries.delete(token);
    this.entries.set(token, { claims, expiresAtMs, keyId });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** The kid in a (verified) token's header, if any. */
function kidOf(token: string): unknown {
  try {
    return (JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')) as { kid?: unknown }).kid;
  } catch {
    return undefined;
  }
}

const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;

/** The configured public keys by kid (their RFC 7638 thumbprints); Ed25519 only, at least one. */
function verificationKeys(pems: string): Map<string, string> {
  const blocks = pems.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error('internal auth: no PEM public key (-----BEGIN PUBLIC KEY-----) configured');
  const keys = new Map<string, string>();
  for (const pem of blocks) {
    if (createPublicKey(pem).asymmetricKeyType !== 'ed25519') throw new Error('internal auth: every public key must be Ed25519 (SPKI PEM)');
    keys.set(jwkThumbprint(pem), `${pem}\n`);
  }
  return keys;
}

function selectKey(keys: Map<string, string>, kid: unknown): string {
  const key = typeof kid === 'string' ? keys.get(kid) : undefined;
  if (!key) throw new HttpError('unauthorized', 'Invalid or expired token');
  return key;
}

/**
 * Verifies the short-lived internal JWT (EdDSA, issuer flowdesk-auth, audience = this service) on
 * every request that asks for it. A user's API key or OAuth token is never accepted here: it is
 * not a JWT signed by the internal key, so it fails verification like any forgery.
 */
export const internalAuth = fp<InternalAuthOptions>(
  async (app, opts) => {
    const keys = verificationKeys(opts.publicKeyPem);
    await app.register(fastifyJwt, {
      // With one key, that key (whatever the token's kid); with several, only the one the kid names:
      // a token never gets to pick among keys it was not signed with.
      secret: {
        public:
          keys.size === 1
            ? [...keys.values()][0]!
            : async (_req: FastifyRequest, token: unknown) => selectKey(keys, (token as { header?: { kid?: unknown } }).header?.kid),
        private: 'verify-only',
      },
      decode: { complete: true },
      verify: {
        algorithms: [INTERNAL_JWT_ALGORITHM],
        allowedIss: INTERNAL_ISSUER,
        allowedAud: opts.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'aud', 'iss'],
        clockTolerance: (opts.clockToleranceSeconds ?? 5) * 1000,
      },
    });
    app.decorateRequest('identity', null as unknown as Identity);
    // The key a verified token was checked with: the one configured key, or the one its kid named.
    const onlyKey = keys.size === 1 ? [...keys.keys()][0]! : undefined;
    const cache = new VerifiedTokenCache(opts.verifiedCacheSize ?? 10_000, (keyId) => keys.has(keyId));
    const verified = async (req: FastifyRequest): Promise<InternalClaims> => {
      const header = req.headers.authorization;
      const bearer = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
      if (!bearer) {
        throw new HttpError('unauthorized', 'Missing bearer token');
      }
      const token = bearer[1]!;
      const known = cache.get(token);
      if (known) return known;
      let claims: InternalClaims;
      try {
        claims = await req.jwtVerify<InternalClaims>();
      } catch {
        throw new HttpError('unauthorized', 'Invalid or expired token');
      }
      cache.set(token, claims, onlyKey ?? String(kidOf(token)));
      return claims;
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
