// The package entry: the embedded start builds this service in its own process.
export { buildApp, DEFAULT_WEB_ROOT, type ConsoleDeps } from './app.ts';
export { csrfTokenFor } from './domain/csrf.ts';
export { SESSION_COOKIE } from './domain/cookies.ts';
export { EDGE_ACCOUNT_ROUTES, UPSTREAM_ROUTES } from './domain/upstreams.ts';
