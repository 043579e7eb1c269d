import { createPublicKey } from 'node:crypto';
import { INTERNAL_JWT_ALGORITHM } from '@flowdesk/contracts';

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: string;
  use: 'sig';
}

/** The JWK (RFC 8037: kty OKP, crv Ed25519) of an internal-token signing key's public half. */
export function toPublicJwk(key: { publicKeyPem: string; kid: string }): PublicJwk {
  const jwk = createPublicKey(key.publicKeyPem).export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: key.kid, alg: INTERNAL_JWT_ALGORITHM, use: 'sig' };
}
