/** The console session's cookie: the `fds_` token, readable by no script. */
export const SESSION_COOKIE = 'fd_session';

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  /** Absolute expiry of the session; the cookie dies with it. */
  expiresAt?: Date;
  now?: Date;
}

/** HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site writes), Path=/, Secure on https. */
export function sessionCookie(token: string, opts: CookieOptions): string {
  const parts = [`${SESSION_COOKIE}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (opts.expiresAt) {
    const seconds = Math.max(0, Math.floor((opts.expiresAt.getTime() - (opts.now ?? new Date()).getTime()) / 1000));
    parts.push(`Max-Age=${seconds}`);
  }
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(secure ? ['Secure'] : [])].join('; ');
}
