/**
 * Masks secrets in what a run records. Steps are shown in the runs panel and over MCP (read
 * scope), so an Authorization header the workflow sends must not be readable there. The request
 * itself is sent unmasked; only the recorded copy changes.
 */

const SENSITIVE_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|password|passwd|api[-_]?key|signature|session|credential/i;
const SENSITIVE_PARAM = /token|secret|password|passwd|api[-_]?key|signature|sig$|auth|credential|session|^key$|^code$/i;
export const MASK = '***';

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

const SENSITIVE_KEY = /password|passwd|secret|token|api[-_]?key|credential/i;

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
