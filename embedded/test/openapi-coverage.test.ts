// Every route the public API serves is in its OpenAPI document (issue 22, item 8: POST /users and the
// disable/enable routes were missing). The public API is the console's edge at /api/v1: workspace-api's
// routes, and what UPSTREAM_ROUTES sends to auth and to the workflow engine. The routes come from the
// services themselves as they registered them (service-kit's registeredRoutes), so a route added
// without documenting it fails here, and so does a forwarded route (auth, the engine) whose request
// body, path or query parameters or 2xx answer schema are not the ones the document shows (issue 35: the console's document is
// assembled by hand from the contracts the routes use; this keeps the two the same).
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
  /** The route behind each forwarded or own public route (its registered schema), by `METHOD /path`. */
  const schemaOf = new Map<string, Readonly<Record<string, unknown>>>();
  const add = (method: string, url: string, schema?: Readonly<Record<string, unknown>>) => {
    served.push(`${method} ${openApiPath(url)}`);
    if (schema) schemaOf.set(`${method} ${openApiPath(url)}`, schema);
  };
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
    add(r.method, route.prefix.includes('*') ? r.url : `/api/v1${route.prefix}${r.url.slice(route.target.length)}`, r.schema);
  }
  assert.ok(served.includes('POST /api/v1/users'), `the auth routes were collected: ${served.join(', ')}`);
  assert.ok(served.includes('GET /api/v1/workflow-runs/{id}'), 'the engine routes were collected');
  assert.ok(served.includes('GET /api/v1/tasks'), 'the workspace-api routes were collected');
  const missing = [...new Set(served)].filter((s) => {
    const [method, p] = s.split(' ') as [string, string];
    return !doc.paths[p]?.[method.toLowerCase()];
  });
  assert.deepEqual(missing, [], 'routes served at /api/v1 but missing from the OpenAPI document');

  // The schemas the document shows for what the edge forwards to auth and the engine are the ones
  // those routes validate and answer with: a route whose body or answer changes fails here by name.
  const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null, (k, x: unknown) => (k === '$id' ? undefined : x))) as unknown;
  // A parameter's description sits beside its schema in OpenAPI: compared without it.
  const bare = (v: unknown): unknown =>
    JSON.parse(JSON.stringify(v ?? null, (k, x: unknown) => (k === '$id' || k === 'description' ? undefined : x))) as unknown;
  const components = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (!v || typeof v !== 'object') return v;
    const ref = (v as { $ref?: string }).$ref;
    if (ref?.startsWith('#/components/schemas/')) return resolve(components[ref.slice('#/components/schemas/'.length)]);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  };
  const drift: string[] = [];
  for (const [key, schema] of schemaOf) {
    const [method, p] = key.split(' ') as [string, string];
    const op = doc.paths[p]?.[method.toLowerCase()] as
      | { requestBody?: { content?: Record<string, { schema?: unknown }> }; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }
      | undefined;
    if (!op) continue;
    if (schema.body) {
      const shown = op.requestBody?.content?.['application/json']?.schema;
      if (JSON.stringify(plain(resolve(shown))) !== JSON.stringify(plain(schema.body))) drift.push(`${key}: request body`);
    }
    // Path and query parameters: each one the route takes, with its schema and whether it is required.
    const parameters = ((op as { parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[] }).parameters ?? []).map(resolve) as {
      name: string;
      in: string;
      required?: boolean;
      schema?: unknown;
    }[];
    for (const [where, of] of [
      ['path', schema.params],
      ['query', schema.querystring],
    ] as const) {
      const object = of as { properties?: Record<string, unknown>; required?: string[] } | undefined;
      for (const [name, param] of Object.entries(object?.properties ?? {})) {
        const shown = parameters.find((x) => x.name === name && x.in === where);
        const required = where === 'path' || (object?.required ?? []).includes(name);
        if (!shown) drift.push(`${key}: ${where} parameter ${name} missing`);
        else if (Boolean(shown.required) !== required) drift.push(`${key}: ${where} parameter ${name} required ${String(shown.required)}`);
        else if (JSON.stringify(bare(shown.schema)) !== JSON.stringify(bare(param)))
          drift.push(`${key}: ${where} parameter ${name}: ${JSON.stringify(bare(shown.schema))}, the route's ${JSON.stringify(bare(param))}`);
      }
    }
    for (const [code, answer] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
      if (!/^2\d\d$/.test(code) || (answer as { type?: string }).type === 'null') continue;
      const shown = op.responses?.[code]?.content?.['application/json']?.schema;
      if (JSON.stringify(plain(resolve(shown))) !== JSON.stringify(plain(answer))) drift.push(`${key}: ${code} answer`);
    }
  }
  assert.ok(schemaOf.size > 10, `the forwarded routes' schemas were collected (${schemaOf.size})`);
  assert.deepEqual(drift, [], 'the document shows other schemas than these routes validate or answer with');
});
