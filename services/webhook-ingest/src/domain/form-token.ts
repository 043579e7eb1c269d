import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '@flowdesk/service-kit';

/**
 * The hosted form's CSRF defence (docs/triggers.md, "Form": why this shape). Each rendered page
 * carries a token in a hidden field, `<issued at>.<page id>.<HMAC>`, signed with the service's form key
 * over the workflow id, the issue time, the page's own random id (each page's token is its own: the
 * submission's event id comes from it) and a nonce; the nonce itself is in a cookie (`HttpOnly`,
 * `SameSite=Strict`, scoped to the form's path). A submission is accepted only when its token verifies
 * with the nonce of the cookie it came with and is younger than FORM_TOKEN_TTL_MS.
 *
 * A page on another site cannot submit the form in a visitor's browser: the browser does not send
 * a SameSite=Strict cookie with a cross-site POST, and that page cannot read a token bound to the
 * visitor's cookie (the same-origin policy). A script that fetches the page gets a token for its own
 * cookie only — it may submit as one more visitor, under the per-address rate limit.
 */

/** How long a rendered form can be submitted: a page left open for a working day still submits. */
export const FORM_TOKEN_TTL_MS = 12 * 60 * 60 * 1000;
/** The nonce cookie (one per form: its Path is the form's). */
export const FORM_COOKIE = 'fd_form';
/** The hidden fields the page adds (a field's name starts with a letter, so these never collide). */
export const TOKEN_FIELD = '_token';
export const HONEYPOT_FIELD = '_website';

const NONCE = /^[A-Za-z0-9_-]{22}$/;

export type TokenCheck = { ok: true; issuedAt: number } | { ok: false; reason: 'missing' | 'forged' | 'expired' };

export function formTokens(key: Buffer, now: () => number) {
  const sign = (workflowId: string, nonce: string, issuedAt: number, page: string) =>
    createHmac('sha256', key).update(`flowdesk-form-v1\n${workflowId.toLowerCase()}\n${nonce}\n${issuedAt}\n${page}`).digest('base64url');
  return {
    /** A fresh nonce for the cookie (16 random bytes). */
    nonce: (): string => randomBytes(16).toString('base64url'),
    /** Whether a cookie's value can be a nonce this service issued (else a new one is set). */
    isNonce: (value: string | undefined): value is string => value !== undefined && NONCE.test(value),
    issue(workflowId: string, nonce: string): string {
      const at = now();
      const page = randomBytes(9).toString('base64url');
      return `${at}.${page}.${sign(workflowId, nonce, at, page)}`;
    },
    check(workflowId: string, nonce: string | undefined, token: unknown): TokenCheck {
      if (typeof token !== 'string' || token === '' || nonce === undefined || !NONCE.test(nonce)) return { ok: false, reason: 'missing' };
      const [issued = '', page = '', signature = '', ...rest] = token.split('.');
      const at = Number(issued);
      if (rest.length > 0 || !/^\d{1,16}$/.test(issued) || !Number.isSafeInteger(at) || !/^[A-Za-z0-9_-]{12}$/.test(page))
        return { ok: false, reason: 'forged' };
      if (!constantTimeEqual(signature, sign(workflowId, nonce, at, page))) return { ok: false, reason: 'forged' };
      const age = now() - at;
      // A token from the future was not issued by this clock (a minute of skew between replicas allowed).
      if (age > FORM_TOKEN_TTL_MS || age < -60_000) return { ok: false, reason: 'expired' };
      return { ok: true, issuedAt: at };
    },
  };
}

/** One cookie's value from a Cookie header (the first of that name). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
