// Every route the public API serves is in its OpenAPI document (issue 22, item 8: POST /users and the
// disable/enable routes were missing). The public API is the console's edge at /api/v1: workspace-api's
// routes, what UPSTREAM_ROUTES sends to auth and to the workflow engine, the routes the edge answers
// itself, and the engine's resume link (PUBLIC_ROUTES). The routes come from the services themselves as
// they registered them (service-kit's registeredRoutes), so a route added without documenting it fails
// here. Since issue 35 the document is generated from those routes' schemas (@fastify/swagger in each
// service) and merged by the console (services/console/src/domain/openapi.ts): this also fails for a
// route that has no answer schema (it would be documented without one), for a document path nothing
// serves, for a $ref the merge left dangling, and for a schema the document shows other than the route's.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { migrateAuth } from '@flowdesk/auth';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { EDGE_ACCOUNT_ROUTES, UPSTREAM_ROUTES } from '@flowdesk/console';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { migrateGateway } from '@flowdesk/mcp-gateway';
import { registeredRoutes } from '@flowdesk/service-kit';
import { migrateEngine } from '@flowdesk/workflow-engine';
import { migrateWorkspace } from '@flowdesk/workspace-api';
import { loadOrCreateKeys } from '../src/keys.ts';
import { closeServices, PUBLIC_ROUTES, startServices, type RunningService } from '../src/services.ts';

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
  /** Routes served without an answer schema for success (2xx, or the 302 of a browser redirect: the OAuth2 callback): documented they would show no answer. */
  const unschemed: string[] = [];
  const needsSchema = (service: string, r: { method: string; url: string; schema?: Readonly<Record<string, unknown>> }) => {
    const response = (r.schema?.response ?? {}) as Record<string, unknown>;
    if (!Object.keys(response).some((c) => /^(?:2\d\d|302)$/.test(c))) unschemed.push(`${service} ${r.method} ${r.url}`);
  };
  // What the engine's resume link prefix takes past the edge, straight from the front's table.
  const direct = PUBLIC_ROUTES.filter((p) => p.service === 'workflow-engine').map((p) => p.prefix);
  for (const r of registeredRoutes(appOf('workspace-api')))
    if (r.url.startsWith('/api/v1/') && !r.hidden && !isDoc(r.url)) {
      add(r.method, r.url);
      needsSchema('workspace-api', r);
    }
  // What the edge answers itself (sessions, sign-up: it sets the cookie); its catch-all forwarding route aside.
  const own = registeredRoutes(appOf('console')).filter((r) => r.url.startsWith('/api/v1/') && !r.url.includes('*') && !r.hidden && !isDoc(r.url));
  for (const r of own) {
    add(r.method, r.url, r.schema);
    // One that relays auth's answer as it is has auth's route's schema.
    const wraps = EDGE_ACCOUNT_ROUTES.find((e) => e.method === r.method && `/api/v1${e.path}` === r.url);
    const by = wraps?.answer === 'relay' ? registeredRoutes(appOf('auth')).find((a) => a.method === r.method && a.url === wraps.auth) : undefined;
    needsSchema('console', by ?? r);
  }
  for (const r of registeredRoutes(appOf('auth')).concat(registeredRoutes(appOf('workflow-engine')))) {
    if (r.hidden) continue;
    if (direct.some((d) => r.url.startsWith(d))) {
      add(r.method, r.url, r.schema);
      needsSchema('workflow-engine', r);
      continue;
    }
    // The public prefix that forwards to this upstream path: the most specific target it falls under.
    const shape = r.url.replace(/:[A-Za-z0-9_]+/g, '*');
    const route = UPSTREAM_ROUTES.filter((u) => shape === u.target || shape.startsWith(`${u.target}/`)).sort((a, b) => b.target.length - a.target.length)[0];
    if (!route || own.some((o) => o.url.startsWith(`/api/v1${route.prefix}`))) continue;
    add(r.method, route.prefix.includes('*') ? r.url : `/api/v1${route.prefix}${r.url.slice(route.target.length)}`, r.schema);
    needsSchema(route.upstream, r);
  }
  assert.ok(served.includes('POST /api/v1/users'), `the auth routes were collected: ${served.join(', ')}`);
  assert.ok(served.includes('GET /api/v1/workflow-runs/{id}'), 'the engine routes were collected');
  assert.ok(served.includes('GET /api/v1/tasks'), 'the workspace-api routes were collected');
  const missing = [...new Set(served)].filter((s) => {
    const [method, p] = s.split(' ') as [string, string];
    return !doc.paths[p]?.[method.toLowerCase()];
  });
  assert.deepEqual(missing, [], 'routes served at /api/v1 but missing from the OpenAPI document');
  assert.ok(served.includes('POST /api/v1/resume/{waitId}'), 'the resume link was collected');
  assert.deepEqual(unschemed, [], 'routes without an answer schema: give each one (the document is generated from it)');
  const stale = Object.entries(doc.paths)
    .flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`))
    .filter((k) => !served.includes(k));
  assert.deepEqual(stale, [], 'operations in the document that nothing serves at /api/v1');
  const dangling = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((name) => !(doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas?.[name]);
  assert.deepEqual([...new Set(dangling)], [], 'references to schemas the document does not have');

  // The schemas the document shows for what the edge forwards to auth and the engine are the ones
  // those routes validate and answer with: a route whose body or answer changes fails here by name.
  // The same schema as @fastify/swagger writes it into OpenAPI (a `const` as a one-value `enum`, the
  // any-key `patternProperties` as `additionalProperties`), keys sorted, without `$id` (and without
  // `description`, for `bare`: a parameter's sits beside its schema in OpenAPI).
  const canonical = (v: unknown, drop: readonly string[]): unknown => {
    if (Array.isArray(v)) return v.map((x) => canonical(x, drop));
    if (!v || typeof v !== 'object') return v;
    const o = { ...(v as Record<string, unknown>) };
    if ('const' in o) {
      o.enum = [o.const];
      delete o.const;
    }
    const pattern = o.patternProperties as Record<string, unknown> | undefined;
    if (pattern && Object.keys(pattern).length === 1 && '^.*$' in pattern) {
      o.additionalProperties = pattern['^.*$'];
      delete o.patternProperties;
    }
    return Object.fromEntries(
      Object.keys(o)
        .filter((k) => !drop.includes(k))
        .sort()
        .map((k) => [k, canonical(o[k], drop)]),
    );
  };
  const plain = (v: unknown): unknown => canonical(JSON.parse(JSON.stringify(v ?? null)), ['$id']);
  const bare = (v: unknown): unknown => canonical(JSON.parse(JSON.stringify(v ?? null)), ['$id', 'description']);
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
      // Its one media type (JSON, or the runs stream's text/event-stream).
      const shown = Object.values(op.responses?.[code]?.content ?? {})[0]?.schema;
      if (JSON.stringify(plain(resolve(shown))) !== JSON.stringify(plain(answer))) drift.push(`${key}: ${code} answer`);
    }
  }
  assert.ok(schemaOf.size > 10, `the forwarded routes' schemas were collected (${schemaOf.size})`);
  assert.deepEqual(drift, [], 'the document shows other schemas than these routes validate or answer with');
});
