/** A public path prefix and the service behind it. */
export interface Route {
  prefix: string;
  service: string;
}

export type Destination =
  { kind: 'front-health' } | { kind: 'front-ready' } | { kind: 'service'; service: string; path: string; strippedPrefix?: string } | { kind: 'none' };

/**
 * Prefix semantics of a Kubernetes Ingress `Prefix` path, so the embedded start and a cluster
 * route the same URLs: matched per path segment (`/api/` takes `/api` and `/api/x`, never
 * `/apix`).
 */
export function matchesPrefix(pathname: string, prefix: string): boolean {
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return pathname === base || pathname.startsWith(`${base}/`);
}

const SERVICE_PROBE = /^\/services\/([^/]+)(\/(?:healthz|readyz))\/?$/;

/**
 * Where a request goes. `/services/<name>/` exposes only the probes: everything else a service
 * serves is reachable through its public prefix or not at all.
 */
export function resolve(url: string, routes: readonly Route[], services: readonly string[]): Destination {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  const search = q === -1 ? '' : url.slice(q);
  // A dot segment could step from one prefix into another service's paths further upstream.
  if (pathname.split('/').some((s) => /^(?:\.|%2e){1,2}$/i.test(s))) return { kind: 'none' };
  if (pathname === '/healthz' || pathname === '/healthz/') return { kind: 'front-health' };
  // Readiness of everything behind the base URL, not of the console that `/` would reach.
  if (pathname === '/readyz' || pathname === '/readyz/') return { kind: 'front-ready' };
  const probe = SERVICE_PROBE.exec(pathname);
  if (probe) {
    const [, service = '', rest = ''] = probe;
    if (!services.includes(service)) return { kind: 'none' };
    return { kind: 'service', service, path: `${rest}${search}`, strippedPrefix: `/services/${service}` };
  }
  const route = [...routes].sort((a, b) => b.prefix.length - a.prefix.length).find((r) => matchesPrefix(pathname, r.prefix));
  return route ? { kind: 'service', service: route.service, path: url } : { kind: 'none' };
}
