/**
 * Which service answers a path of the public API, in one table. Account routes go to auth (under
 * /auth/v1, with the caller's own credential, since auth issued it); everything else to workspace-api
 * (with an internal token minted for the caller); workflow runs to the workflow engine, which owns them
 * (with an internal token for its audience), and so do workflow credentials.
 */
export type Upstream = 'auth' | 'workspace-api' | 'workflow-engine';

export interface UpstreamRoute {
  /** Path under /api/v1, matched per segment. */
  prefix: string;
  upstream: Upstream;
  /** The path at the upstream that replaces `prefix`. */
  target: string;
}

export const API_PREFIX = '/api/v1';

export const UPSTREAM_ROUTES: readonly UpstreamRoute[] = [
  { prefix: '/session/all', upstream: 'auth', target: '/auth/v1/sessions' },
  { prefix: '/session', upstream: 'auth', target: '/auth/v1/sessions/current' },
  { prefix: '/setup', upstream: 'auth', target: '/auth/v1/setup' },
  { prefix: '/signup', upstream: 'auth', target: '/auth/v1/signup' },
  { prefix: '/account', upstream: 'auth', target: '/auth/v1/account' },
  { prefix: '/api-keys', upstream: 'auth', target: '/auth/v1/api-keys' },
  { prefix: '/connected-apps', upstream: 'auth', target: '/auth/v1/connected-apps' },
  { prefix: '/invites', upstream: 'auth', target: '/auth/v1/invites' },
  { prefix: '/users', upstream: 'auth', target: '/auth/v1/users' },
  { prefix: '/workflow-runs', upstream: 'workflow-engine', target: '/api/v1/workflow-runs' },
  // Workflow credentials: the engine owns the store, the only consumer of their plaintext (docs/credentials.md).
  { prefix: '/credentials', upstream: 'workflow-engine', target: '/api/v1/credentials' },
  // `*`: exactly one path segment (the workflow id).
  { prefix: '/workflows/*/runs', upstream: 'workflow-engine', target: '/api/v1/workflows/*/runs' },
  // Run this step: the engine executes one node against a sample (docs/workflow-engine.md).
  { prefix: '/workflows/*/test-step', upstream: 'workflow-engine', target: '/api/v1/workflows/*/test-step' },
  // The owner's record of step tests.
  { prefix: '/workflows/*/step-tests', upstream: 'workflow-engine', target: '/api/v1/workflows/*/step-tests' },
  // The dry run of the editor's previews: the engine walks the graph on the sample, executing no action.
  { prefix: '/workflows/*/dry-run', upstream: 'workflow-engine', target: '/api/v1/workflows/*/dry-run' },
];

function matches(path: string, prefix: string): boolean {
  if (!prefix.includes('*')) return path === prefix || path.startsWith(`${prefix}/`);
  const want = prefix.split('/');
  const have = path.split('/');
  return have.length >= want.length && want.every((seg, i) => (seg === '*' ? have[i] !== '' : seg === have[i]));
}

/** `rest` is the path after /api/v1 (with its query). */
export function upstreamOf(rest: string): { upstream: Upstream; path: string } {
  const q = rest.indexOf('?');
  const pathname = q === -1 ? rest : rest.slice(0, q);
  const route = UPSTREAM_ROUTES.find((r) => matches(pathname, r.prefix));
  if (!route) return { upstream: 'workspace-api', path: `${API_PREFIX}${rest}` };
  // A wildcard route keeps the path as it came (its target names the same path on the upstream).
  if (route.prefix.includes('*')) return { upstream: route.upstream, path: `${API_PREFIX}${rest}` };
  return { upstream: route.upstream, path: `${route.target}${rest.slice(route.prefix.length)}` };
}

/**
 * Routes of the public API that the edge answers itself rather than forwarding, each by calling one
 * auth route (`auth`): the ones that open or close the console session (the token goes into the
 * cookie, never a body), and GET /session (adds the CSRF token). The edge registers them from this
 * table, and the OpenAPI document shows each with the auth route's summary, body and errors and the
 * edge's own answer (domain/openapi.ts).
 */
export interface EdgeAccountRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path under /api/v1. */
  path: string;
  /** The auth route it calls (same method). */
  auth: string;
  /** relay: auth's answer as it is; opens: a new session into the cookie; closes: the cookie's session ends; current: the session, plus the CSRF token. */
  answer: 'relay' | 'opens' | 'closes' | 'current';
}

export const EDGE_ACCOUNT_ROUTES: readonly EdgeAccountRoute[] = [
  { method: 'GET', path: '/setup', auth: '/auth/v1/setup', answer: 'relay' },
  { method: 'POST', path: '/setup', auth: '/auth/v1/setup', answer: 'opens' },
  { method: 'POST', path: '/signup', auth: '/auth/v1/signup', answer: 'opens' },
  { method: 'POST', path: '/session', auth: '/auth/v1/sessions', answer: 'opens' },
  { method: 'DELETE', path: '/session', auth: '/auth/v1/sessions/current', answer: 'closes' },
  { method: 'DELETE', path: '/session/all', auth: '/auth/v1/sessions', answer: 'closes' },
  { method: 'GET', path: '/session', auth: '/auth/v1/sessions/current', answer: 'current' },
];

/**
 * Public paths the front sends to a service past the edge (embedded/src/services.ts PUBLIC_ROUTES,
 * deploy/k8s/base/ingress.yaml): the path is the same at the service. The document shows them too.
 */
export const DIRECT_PUBLIC_PREFIXES: readonly { prefix: string; upstream: Upstream }[] = [{ prefix: '/resume', upstream: 'workflow-engine' }];

/**
 * The public path (under /api/v1, OpenAPI's `{param}` form) at which the edge serves an upstream's
 * path, or undefined when the edge does not forward to it (auth's OAuth routes, the engine's internal ones).
 */
export function publicPathOf(upstream: Upstream, path: string): string | undefined {
  if (upstream === 'workspace-api') {
    if (!path.startsWith(`${API_PREFIX}/`)) return undefined;
    return upstreamOf(path.slice(API_PREFIX.length)).upstream === 'workspace-api' ? path : undefined;
  }
  if (DIRECT_PUBLIC_PREFIXES.some((d) => d.upstream === upstream && matches(path, `${API_PREFIX}${d.prefix}`))) return path;
  // The most specific target the path falls under, with `{param}` matching a `*` segment.
  const shape = path.replace(/\{[^/}]+\}/g, '*');
  const route = UPSTREAM_ROUTES.filter((r) => r.upstream === upstream && (shape === r.target || shape.startsWith(`${r.target}/`))).sort(
    (a, b) => b.target.length - a.target.length,
  )[0];
  if (!route) return undefined;
  const rest = route.prefix.includes('*') ? path.slice(API_PREFIX.length) : `${route.prefix}${path.slice(route.target.length)}`;
  // Reached only if the edge really sends that public path there (a more specific route may win).
  return upstreamOf(rest).upstream === upstream ? `${API_PREFIX}${rest}` : undefined;
}
