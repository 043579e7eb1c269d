import { CurrentConsoleSession, ErrorBody, OpenedConsoleSession } from '@flowdesk/contracts';
import { PUBLIC_SECURITY, PUBLIC_SECURITY_SCHEMES } from '@flowdesk/service-kit';
import { API_PREFIX, EDGE_ACCOUNT_ROUTES, publicPathOf, type Upstream } from './upstreams.ts';

type Json = Record<string, unknown>;
/** An OpenAPI document as JSON: only the parts read here are typed. */
export interface OpenApiDocument extends Json {
  paths?: Record<string, Record<string, Json>>;
  info?: Json & { version?: string };
  components?: Json & { schemas?: Record<string, unknown> };
}

/** The documents merged, by the service that served each (undefined: it did not answer). */
export type UpstreamDocuments = Partial<Record<Upstream, OpenApiDocument>>;

const strip = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' ? undefined : v))) as unknown;
const STATUS_TEXT: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content' };
const OPENS = 'Opens a console session: sets the fd_session cookie (HttpOnly, SameSite=Lax) and answers the CSRF token (the session token is never in a body).';
const CLOSES = 'Ends the cookie’s session at auth and clears the cookie (a console session only: API keys are revoked under /api/v1/api-keys).';

/** `#/components/schemas/<from>` → `<to>` everywhere in a value. */
function renameRefs(value: unknown, renames: Map<string, string>): unknown {
  if (renames.size === 0) return value;
  return JSON.parse(
    JSON.stringify(value, (k, v: unknown) => {
      if (k !== '$ref' || typeof v !== 'string' || !v.startsWith('#/components/schemas/')) return v;
      const to = renames.get(v.slice('#/components/schemas/'.length));
      return to ? `#/components/schemas/${to}` : v;
    }),
  ) as unknown;
}

/** Each answer's description says its status rather than @fastify/swagger's "Default Response"; an operation that names no error gets ErrorBody as its default. */
function polish(op: Json): Json {
  const responses: Record<string, Json> = {};
  for (const [code, answer] of Object.entries((op.responses ?? {}) as Record<string, Json>))
    responses[code] = answer.description === 'Default Response' ? { ...answer, description: STATUS_TEXT[code] ?? (/^2/.test(code) ? 'OK' : 'Error') } : answer;
  if (!Object.keys(responses).some((c) => /^[45]|default/.test(c)))
    responses.default = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
  return { ...op, responses };
}

const answerSchema = (schema: unknown) => ({ content: { 'application/json': { schema: strip(schema) } } });

/**
 * The public API's document (GET /api/v1/openapi.json), merged from the documents the services
 * generate from their routes' schemas (@fastify/swagger; docs/console.md, on the OpenAPI document):
 * workspace-api's /api/v1 paths, auth's and the engine's at the public paths the edge forwards them
 * from (UPSTREAM_ROUTES), and the routes the edge answers itself (EDGE_ACCOUNT_ROUTES) shown with
 * the auth route each calls and the edge's own answer. Component names that two services use for
 * different schemas get the service's name in front. The edge's security schemes replace
 * workspace-api's internal JWT, which nobody outside can hold. `missing`: services that did not
 * answer (their routes are left out, and the description says so).
 */
export function publicOpenApi(docs: UpstreamDocuments, publicBaseUrl: string, missing: readonly Upstream[] = []): OpenApiDocument {
  const schemas: Record<string, unknown> = { ErrorBody: strip(ErrorBody) };
  const paths: Record<string, Record<string, Json>> = {};
  const put = (path: string, method: string, op: Json) => {
    (paths[path] ??= {})[method] = polish(op);
  };
  const own = new Set(EDGE_ACCOUNT_ROUTES.map((r) => `${r.method.toLowerCase()} ${API_PREFIX}${r.path}`));
  const ownPaths = new Set(EDGE_ACCOUNT_ROUTES.map((r) => `${API_PREFIX}${r.path}`));
  const authOps = new Map<string, Json>();
  for (const upstream of ['workspace-api', 'auth', 'workflow-engine'] as const) {
    const doc = docs[upstream];
    if (!doc) continue;
    // Components: the first service's name stays; another's different schema of that name is renamed.
    const renames = new Map<string, string>();
    const incoming = doc.components?.schemas ?? {};
    for (const [name, schema] of Object.entries(incoming)) {
      if (name in schemas && JSON.stringify(schemas[name]) !== JSON.stringify(schema)) renames.set(name, `${upstream}.${name}`);
    }
    for (const [name, schema] of Object.entries(incoming)) schemas[renames.get(name) ?? name] = renameRefs(schema, renames);
    for (const [path, item] of Object.entries((renameRefs(doc.paths ?? {}, renames) as OpenApiDocument['paths'])!)) {
      for (const [method, op] of Object.entries(item)) if (upstream === 'auth') authOps.set(`${method} ${path}`, op);
      const pub = publicPathOf(upstream, path);
      if (!pub || pub === `${API_PREFIX}/openapi.json` || ownPaths.has(pub)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (upstream === 'workspace-api') {
          // Its per-operation security is the internal JWT: the edge's defaults apply instead.
          const { security: _internal, ...rest } = op;
          put(pub, method, rest);
        } else put(pub, method, op);
      }
    }
  }
  // The edge's own routes: the auth route's summary, body and errors, the edge's answer.
  for (const route of EDGE_ACCOUNT_ROUTES) {
    const method = route.method.toLowerCase();
    const at = authOps.get(`${method} ${route.auth}`);
    if (!at || !own.has(`${method} ${API_PREFIX}${route.path}`)) continue;
    const responses = { ...((at.responses ?? {}) as Record<string, Json>) };
    let description = at.description as string | undefined;
    if (route.answer === 'opens') {
      for (const code of Object.keys(responses)) if (/^2/.test(code)) delete responses[code];
      responses[201] = { description: 'Created', ...answerSchema(OpenedConsoleSession) };
      description = [OPENS, description].filter(Boolean).join(' ');
    } else if (route.answer === 'current') {
      responses[200] = { description: 'OK', ...answerSchema(CurrentConsoleSession) };
    } else if (route.answer === 'closes') description = [CLOSES, description].filter(Boolean).join(' ');
    put(`${API_PREFIX}${route.path}`, method, { ...at, ...(description ? { description } : {}), responses });
  }
  const workspace = docs['workspace-api'];
  const incomplete = missing.length
    ? ` This copy is incomplete: ${missing.join(', ')} did not give its document, so its routes are missing; reload in a minute.`
    : '';
  return {
    openapi: '3.1.0',
    info: {
      title: 'Flowdesk API',
      version: workspace?.info?.version ?? '1.0.0',
      description: `The public API of Flowdesk: your workspace (projects, tasks, calendar, notes, workflows, runs, comments, profile) and your account. Authenticate with an API key or OAuth access token as a bearer token, or — in the browser console — with the session cookie plus the X-CSRF-Token header on every change. A read credential (mcp:read) gets 403 on writes.${incomplete}`,
    },
    servers: [{ url: publicBaseUrl }],
    paths,
    components: { schemas, securitySchemes: PUBLIC_SECURITY_SCHEMES },
    security: PUBLIC_SECURITY,
  };
}
