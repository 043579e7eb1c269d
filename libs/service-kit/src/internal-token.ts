import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { INTERNAL_ISSUER, INTERNAL_TOKEN_TTL_SECONDS, type InternalClaims } from '@flowdesk/contracts';

export interface SigningKeys {
  /** PEM, PKCS#8. Only the auth service holds it. */
  privateKeyPem: string;
  /** PEM, SPKI. Every service that verifies internal tokens. */
  publicKeyPem: string;
  /** Key id, in the token header and the JWKS. */
  kid: string;
}

export function generateSigningKeys(): SigningKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: (privateKey as KeyObject).export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: (publicKey as KeyObject).export({ type: 'spki', format: 'pem' }).toString(),
    kid: randomUUID(),
  };
}

/** Mints an internal token for `aud` on behalf of a user (the auth service's job; tests use it too). */
export function signInternalToken(
  keys: Pick<SigningKeys, 'privateKeyPem' | 'kid'>,
  claims: { sub: string; aud: string; scope: string; azp?: string; client_id?: string },
  options: { ttlSeconds?: number; now?: number } = {},
): string {
  const iat = Math.floor((options.now ?? Date.now()) / 1000);
  const payload: InternalClaims = {
    iss: INTERNAL_ISSUER,
    iat,
    exp: iat + (options.ttlSeconds ?? INTERNAL_TOKEN_TTL_SECONDS),
    jti: randomUUID(),
    ...claims,
  };
  const sign = createSigner({ key: keys.privateKeyPem, algorithm: 'EdDSA', kid: keys.kid });
  return sign(payload);
}
