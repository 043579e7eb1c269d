// Walks the console's route table (routes.tsx): every route has a page, the navigation and the
// owner guard follow the table, and every path the app routes is one the server answers with the
// app (PAGES in src/routes/web.ts), so a reload or a shared link opens it.
import { isValidElement } from 'react';
import { expect, test } from 'vitest';
import { PAGES } from '../../src/routes/web.ts';
import type { SessionInfo } from './api.ts';
import { matchRoute, navEntries, PUBLIC_ROUTES, ROUTES } from './routes.tsx';

const UUID = '0b6f8e0e-51c2-4c5e-9a43-1f6b1c1f2d3e';
const sample = (path: string) => path.replace(':uuid', UUID).replace(':id', UUID);
const session: SessionInfo = { user: { id: UUID, email: 'ann@example.com', name: 'Ann', role: 'owner' }, csrfToken: 'x' };
const servedByTheApp = (path: string) => path === '/' || PAGES.some((p) => path === p || path.startsWith(`${p}/`));

test('every route has a page, and its path opens that route', () => {
  expect(ROUTES.length).toBeGreaterThan(0);
  for (const route of ROUTES) {
    const match = matchRoute(sample(route.path), true);
    expect(match?.route, route.path).toBe(route);
    expect(isValidElement(route.page({ session, onSignedOut: () => {}, id: match!.id })), `${route.path} renders a page`).toBe(true);
  }
  for (const route of PUBLIC_ROUTES) {
    const page = route.page({ setup: { needsOwner: false, signup: 'invite' }, onDone: () => {} });
    expect(isValidElement(page), `${route.path} renders a page`).toBe(true);
  }
});

test('every route is served by the server as the app (a reload is the page, not a 404)', () => {
  for (const route of [...ROUTES, ...PUBLIC_ROUTES]) expect(servedByTheApp(sample(route.path)), route.path).toBe(true);
});

test('every route is in the navigation or names the entry it highlights, and every entry has a title', () => {
  const entries = new Set(ROUTES.filter((r) => r.nav).map((r) => r.path));
  for (const route of ROUTES) {
    if (route.nav) expect(route.title, route.path).toBeTruthy();
    else expect(entries.has(route.highlight ?? ''), `${route.path} highlights a nav entry`).toBe(true);
  }
});

test('owner-only routes: not in a member’s navigation, and "Page not found" for them', () => {
  const ownerOnly = ROUTES.filter((r) => r.ownerOnly);
  expect(ownerOnly.map((r) => r.path)).toContain('/settings/members');
  for (const route of ownerOnly) {
    expect(navEntries('settings', false)).not.toContain(route);
    expect(navEntries('settings', true)).toContain(route);
    expect(matchRoute(sample(route.path), false)).toBeNull();
  }
});

test('paths: parameters decoded, a malformed or non-UUID one is not found, unknown paths are not found', () => {
  expect(matchRoute('/workflows/a%20b', false)).toMatchObject({ id: 'a b', route: { path: '/workflows/:id' } });
  expect(matchRoute('/workflows/%E0%A4%A', false)).toBeNull();
  expect(matchRoute(`/workflows/${UUID}/runs`, false)).toMatchObject({ id: UUID, route: { path: '/workflows/:uuid/runs' } });
  expect(matchRoute('/runs/not-a-run', false)).toBeNull();
  expect(matchRoute('/settings/nothing', true)).toBeNull();
  expect(matchRoute('/', false)?.route.title).toBe('Overview');
});
