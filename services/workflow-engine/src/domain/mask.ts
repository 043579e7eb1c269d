import { credentialHttpAuth, secretFieldKeys, SECRET_FIELD_NAME, SECRET_HEADER_NAME, SECRET_MASK, SECRET_PARAM_NAME } from '@flowdesk/contracts';
import type { CredentialValue } from './ports.ts';

/**
 * Masks secrets in what a run records. Steps are shown in the runs panel and over MCP (read
 * scope), so an Authorization header the workflow sends must not be readable there. The request
 * itself is sent unmasked; only the recorded copy changes.
 */

// The names that mark a secret, shared with workspace-api's masking of inline secrets (libs/contracts).
const SENSITIVE_HEADER = SECRET_HEADER_NAME;
const SENSITIVE_PARAM = SECRET_PARAM_NAME;
export const MASK = '***';
export { SECRET_MASK };

export function isSensitiveName(name: string): boolean {
  return SENSITIVE_HEADER.test(name);
}

/** `Authorization: Bearer abc` → `Bearer ***` (the scheme helps debugging and is not secret). */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!isSensitiveName(name)) out[name] = value;
    else if (/^authorization$|^proxy-authorization$/i.test(name)) out[name] = maskAuthorization(value);
    else out[name] = MASK;
  }
  return out;
}

function maskAuthorization(value: string): string {
  const m = /^([A-Za-z][A-Za-z0-9._~+/-]*)\s+\S/.exec(value);
  return m ? `${m[1]} ${MASK}` : MASK;
}

/** Masks the password of `user:pass@host` and the values of secret-looking query parameters. */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.password) url.password = MASK;
  for (const name of [...url.searchParams.keys()]) if (SENSITIVE_PARAM.test(name)) url.searchParams.set(name, MASK);
  return url.href;
}

const SENSITIVE_KEY = SECRET_FIELD_NAME;

/** A copy of a JSON body with secret-looking keys masked, for the recorded step input. */
export function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SENSITIVE_KEY.test(k) && v !== null && typeof v !== 'object' ? MASK : maskJson(v);
    return out;
  }
  return value;
}

/**
 * The strings of resolved credentials a run must never record: a secret credential's value, a typed
 * one's secret fields, and what its type sends over HTTP (a Basic header's base64, which the value's
 * own forms cannot match). Passed to redactSecrets and to the run's logger.
 */
export function credentialSecrets(credentials: ReadonlyMap<string, CredentialValue> | undefined): string[] {
  const out: string[] = [];
  for (const value of credentials?.values() ?? []) {
    if (typeof value === 'string') {
      out.push(value);
      continue;
    }
    for (const key of secretFieldKeys(value.type)) if (value.fields[key]) out.push(value.fields[key]);
    const auth = credentialHttpAuth(value.type, value.fields);
    if (auth) out.push(...Object.values(auth.headers), ...Object.values(auth.query));
  }
  return out;
}

/**
 * The forms in which a resolved credential may show up in what a run records: as written, and
 * URL-encoded (a credential in a query string). Values under 4 characters are not searched for
 * (they would mask ordinary text); docs/credentials.md says so.
 */
function secretForms(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length < 4) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  // Longest first, so a secret containing another is replaced whole.
  return [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
}

/**
 * A copy of a recorded value (step inputs, outputs, errors, warnings, log fields) with every
 * occurrence of a resolved credential value replaced by `••••`. Keys are masked too (a header named
 * after a secret). The request itself was sent with the real values; only the record changes.
 */
export function redactSecrets<T>(value: T, secrets: Iterable<string>): T {
  const forms = secretForms(secrets);
  if (forms.length === 0) return value;
  const redactString = (s: string) => {
    let out = s;
    for (const f of forms) if (out.includes(f)) out = out.split(f).join(SECRET_MASK);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactString(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[redactString(k)] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
