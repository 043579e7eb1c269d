import { randomBytes } from 'node:crypto';
import { SecretBox as SharedSecretBox } from '@flowdesk/service-kit';

/**
 * Webhook secrets at rest: AES-256-GCM with a key from configuration (WEBHOOK_SECRET_KEY), so a
 * database dump alone does not reveal them. Encrypted rather than hashed because the trigger
 * settings show the secret again and signed deliveries (HMAC) need the secret itself. The sealing
 * itself is shared with the engine's credentials store (libs/service-kit secret-box.ts).
 */
export class SecretBox extends SharedSecretBox {
  /** A new webhook secret: 32 random bytes, prefixed so people recognise it in a header. */
  static generateSecret(): string {
    return `whsec_${randomBytes(32).toString('base64url')}`;
  }
}
