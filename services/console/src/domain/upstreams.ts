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
