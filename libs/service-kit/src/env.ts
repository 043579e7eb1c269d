/** A configuration variable a service cannot start without: a clear error naming it, at start. */
export function requiredEnv(env: Record<string, string | undefined>, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

/**
 * A comma-separated list of browser origins (`scheme://host[:port]`, http or https, no path), e.g.
 * MCP_CORS_ORIGINS; anything else is a configuration error naming the variable. Trailing slashes are
 * dropped; the origins are returned as written (compare them lower-cased).
 */
export function originList(name: string, value: string | undefined): string[] {
  const list = (value ?? '')
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const o of list) {
    let url: URL | undefined;
    try {
      url = new URL(o);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== o.toLowerCase()) {
      throw new Error(`${name}: ${o} is not an origin (scheme://host[:port], no path)`);
    }
  }
  return list;
}

/**
 * INTROSPECTION_CACHE_MS: how long an active introspection answer is reused (0..60000, default
 * 30000): the console edge's and the MCP gateway's AuthClient, in their own processes and in the
 * embedded start.
 */
export function introspectionCacheMsFrom(env: Record<string, string | undefined>): number {
  const cacheMs = Number(env.INTROSPECTION_CACHE_MS || 30_000);
  if (!Number.isInteger(cacheMs) || cacheMs < 0 || cacheMs > 60_000) throw new Error('INTROSPECTION_CACHE_MS must be 0..60000');
  return cacheMs;
}
