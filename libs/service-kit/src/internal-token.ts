import { createHash, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { INTERNAL_ISSUER, INTERNAL_TOKEN_TTL_SECONDS, type InternalClaims } from '@flowdesk/contracts';

export interface SigningKeys {
  /** PEM, PKCS#8. Only the auth service holds it. */
  privateKeyPem: string;
  /** PEM, SPKI. Every service that verifies internal tokens. */
  publicKeyPem: string;
  /** Key id, in the token header and the JWKS: the key's RFC 7638 thumbprint (see jwkThumbprint). */
  kid: string;
}

/**
 * RFC 7638 thumbprint of an Ed25519 public key: the internal tokens' `kid`. Derived from the key,
 * so a verifier holding several public keys (a rotation) picks the right one without another
 * variable to keep in step.
 */
export function jwkThumbprint(publicKeyPem: string): string {
  const { crv, kty, x } = createPublicKey(publicKeyPem).export({ format: 'jwk' }) as { crv: string; kty: string; x: string };
  return createHash('sha256').update(JSON.stringify({ crv, kty, x })).digest('base64url');
}

export function generateSigningKeys(): SigningKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem,
    kid: jwkThumbprint(publicKeyPem),
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
