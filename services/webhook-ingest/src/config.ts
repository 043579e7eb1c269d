import { hkdfSync } from 'node:crypto';
import { DEFAULT_MAX_BACKLOG, DEFAULT_RATE_LIMIT, type WebhookIngestDeps } from './app.ts';
import { DEFAULT_FORM_SUBMISSIONS_PER_MINUTE } from './routes/form-trigger.ts';

/**
 * Admission from the environment (docs/configuration.md): WEBHOOK_RATE_LIMIT_PER_SECOND,
 * WEBHOOK_RATE_LIMIT_BURST and WEBHOOK_MAX_BACKLOG. Read by the service's main and by the embedded
 * start alike, so both ways of running honour them.
 */
export function admissionFromEnv(env: NodeJS.ProcessEnv): Required<Pick<WebhookIngestDeps, 'rateLimit'>> & { backlog: { maxBacklog: number } } {
  const rate = (name: string, fallback: number) => {
    const v = Number(env[name] || fallback);
    if (!(v > 0)) throw new Error(`${name} must be a positive number`);
    return v;
  };
  const raw = env.WEBHOOK_MAX_BACKLOG;
  const maxBacklog = raw ? Number(raw) : DEFAULT_MAX_BACKLOG;
  if (!Number.isSafeInteger(maxBacklog) || maxBacklog < 0) throw new Error('WEBHOOK_MAX_BACKLOG must be a whole number ≥ 0 (0 turns it off)');
  return {
    rateLimit: {
      perSecond: rate('WEBHOOK_RATE_LIMIT_PER_SECOND', DEFAULT_RATE_LIMIT.perSecond),
      burst: rate('WEBHOOK_RATE_LIMIT_BURST', DEFAULT_RATE_LIMIT.burst),
    },
    backlog: { maxBacklog },
  };
}

/**
 * Hosted forms from the environment (docs/configuration.md): FORM_SUBMISSIONS_PER_MINUTE (per address
 * and form, default 10) and the key that signs the pages' CSRF tokens — FORM_TOKEN_SECRET (at least 32
 * characters), else derived from `fallbackSecret` (the service's client secret, which every replica
 * shares), so a page rendered by one replica submits to any other. Derived with HKDF under its own
 * label: the key is used for nothing else, and the secret it comes from cannot be read back from it.
 */
export function formsFromEnv(env: NodeJS.ProcessEnv, fallbackSecret?: string): { submissionsPerMinute: number; tokenKey?: Buffer } {
  const raw = env.FORM_SUBMISSIONS_PER_MINUTE;
  const submissionsPerMinute = raw ? Number(raw) : DEFAULT_FORM_SUBMISSIONS_PER_MINUTE;
  if (!Number.isSafeInteger(submissionsPerMinute) || submissionsPerMinute < 1) throw new Error('FORM_SUBMISSIONS_PER_MINUTE must be a whole number ≥ 1');
  const secret = env.FORM_TOKEN_SECRET || fallbackSecret;
  if (env.FORM_TOKEN_SECRET && env.FORM_TOKEN_SECRET.length < 32) throw new Error('FORM_TOKEN_SECRET must be at least 32 characters');
  return { submissionsPerMinute, ...(secret ? { tokenKey: formTokenKey(secret) } : {}) };
}

/** The form-token key of a secret (HKDF-SHA256, label "flowdesk form tokens v1"). */
export const formTokenKey = (secret: string | Buffer): Buffer => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'flowdesk form tokens v1', 32));
