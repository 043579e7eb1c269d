// Every route the public API serves is in its OpenAPI document (issue 22, item 8: POST /users and the
// disable/enable routes were missing). The public API is the console's edge at /api/v1: workspace-api's
// routes, and what UPSTREAM_ROUTES sends to auth and to the workflow engine. The routes come from the
// services themselves as they registered them (service-kit's registeredRoutes), so a route added
// without documenting it fails here.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { migrateAuth } from '@flowdesk/auth';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { UPSTREAM_ROUTES } from '@flowdesk/console';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { migrateGateway } from '@flowdesk/mcp-gateway';
import { registeredRoutes } from '@flowdesk/service-kit';
import { migrateEngine } from '@flowdesk/workflow-engine';
import { migrateWorkspace } from '@flowdesk/workspace-api';
import { loadOrCreateKeys } from '../src/keys.ts';
import { closeServices, startServices, type RunningService } from '../src/services.ts';

let testDb: TestDatabase;
let bus: EventBus;
let home: string;
let services: RunningService[] = [];

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-openapi-'));
  testDb = await createTestDatabase();
  for (const migrate of [migrateWorkspace, migrateAuth, migrateGateway, migrateEngine]) await migrate(testDb.db);
  bus = await createEmbeddedBus(testDb.db);
  services = await startServices({ db: testDb.db, bus, keys: await loadOrCreateKeys(home), publicBaseUrl: 'http://flowdesk.test', logLevel: 'silent' });
});
after(async () => {
  await closeServices(services);
  await bus?.close();
  await testDb?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

const appOf = (name: string) => services.find((s) => s.name === name)!.app;
/** `/users/:id/disable` → `/users/{id}/disable`, as OpenAPI writes path parameters. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/$/, '');

test('every route of the public API (workspace-api, and what the edge sends to auth and the engine) is in /api/v1/openapi.json', async () => {
  const consoleUrl = services.find((s) => s.name === 'console')!.url;
  const res = await fetch(`${consoleUrl}/api/v1/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };

  const isDoc = (url: string) => url.startsWith('/api/v1/openapi') || url.startsWith('/api/v1/docs');
  const served: string[] = [];
  const add = (method: string, url: string) => served.push(`${method} ${openApiPath(url)}`);
  for (const r of registeredRoutes(appOf('workspace-api'))) if (r.url.startsWith('/api/v1/') && !r.hidden && !isDoc(r.url)) add(r.method, r.url);
  // What the edge answers itself (sessions, sign-up: it sets the cookie); its catch-all forwarding route aside.
  const own = registeredRoutes(appOf('console')).filter((r) => r.url.startsWith('/api/v1/') && !r.url.includes('*') && !r.hidden && !isDoc(r.url));
  for (const r of own) add(r.method, r.url);
  for (const r of registeredRoutes(appOf('auth')).concat(registeredRoutes(appOf('workflow-engine')))) {
    if (r.hidden) continue;
    // The public prefix that forwards to this upstream path: the most specific target it falls under.
    const shape = r.url.replace(/:[A-Za-z0-9_]+/g, '*');
    const route = UPSTREAM_ROUTES.filter((u) => shape === u.target || shape.startsWith(`${u.target}/`)).sort((a, b) => b.target.length - a.target.length)[0];
    if (!route || own.some((o) => o.url.startsWith(`/api/v1${route.prefix}`))) continue;
    add(r.method, route.prefix.includes('*') ? r.url : `/api/v1${route.prefix}${r.url.slice(route.target.length)}`);
  }
  assert.ok(served.includes('POST /api/v1/users'), `the auth routes were collected: ${served.join(', ')}`);
  assert.ok(served.includes('GET /api/v1/workflow-runs/{id}'), 'the engine routes were collected');
  assert.ok(served.includes('GET /api/v1/tasks'), 'the workspace-api routes were collected');
  const missing = [...new Set(served)].filter((s) => {
    const [method, p] = s.split(' ') as [string, string];
    return !doc.paths[p]?.[method.toLowerCase()];
  });
  assert.deepEqual(missing, [], 'routes served at /api/v1 but missing from the OpenAPI document');
});
