/**
 * Secrets written inline in a workflow's nodes, and how a read-only caller sees them
 * (docs/credentials.md, "Inline secrets"). The credentials store is the place for secrets; a graph
 * may still hold some typed in by hand, and `mcp:read` must not be enough to read them (revealing
 * the webhook secret needs write, so must this). One rule, shared by workspace-api (GET
 * /workflows, MCP get_workflow) and the engine's recorded steps.
 */

export const SECRET_MASK = '••••';

/** Header names whose value is a secret: Authorization, Cookie, anything *-Key, *token*, *secret*, … */
export const SECRET_HEADER_NAME =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|[-_]key$|^key$|token|secret|password|passwd|api[-_]?key|signature|session|credential/i;
/**
 * Query parameter names whose value is a secret, in a URL a workflow sends to (recorded steps, errors,
 * attemptErrors, inline-secret masking). `code` is not one: `?code=US` is ordinary data there.
 */
export const SECRET_PARAM_NAME = /token|secret|password|passwd|api[-_]?key|signature|sig$|auth|credential|session|^key$|[-_]key$/i;
/** In a URL Flowdesk receives (its request logs), also `code`: an OAuth redirect's authorization code. */
export const RECEIVED_SECRET_PARAM_NAME = new RegExp(`${SECRET_PARAM_NAME.source}|^code$`, 'i');
/** JSON body field names whose (scalar) value is a secret. */
export const SECRET_FIELD_NAME = /password|passwd|secret|token|api[-_]?key|credential|^key$|[-_]key$|private[-_]?key/i;

// A template variable ({{trigger.x}}, {{credentials.name}}) is a reference, not a secret: kept as written.
const VARIABLE = /(\{\{[^{}]*\}\})/;
// "Bearer ", "Basic ", "token ": the scheme in front of a credential is not secret and helps reading.
const SCHEME = /^\s*[A-Za-z][A-Za-z0-9._~+/-]*\s+$/;

/**
 * A value with its literal text masked and its template variables kept: `Bearer abc` → `Bearer ••••`,
 * `Bearer {{credentials.api}}` unchanged, `{{credentials.user}}:hunter2` → `{{credentials.user}}••••`.
 */
export function maskLiteral(value: string): string {
  const parts = value.split(VARIABLE);
  let changed = false;
  const out = parts.map((part, i) => {
    if (i % 2 === 1 || part.trim() === '') return part;
    if (i === 0 && parts.length > 1 && SCHEME.test(part)) return part;
    if (i === 0 && parts.length === 1) {
      const scheme = /^([A-Za-z][A-Za-z0-9._~+/-]*\s+)\S/.exec(part);
      if (scheme && /^(bearer|basic|token|digest|apikey)\s/i.test(scheme[1]!)) {
        changed = true;
        return `${scheme[1]}${SECRET_MASK}`;
      }
    }
    changed = true;
    return SECRET_MASK;
  });
  return changed ? out.join('') : value;
}

/** `https://user:pass@host/?token=x` → `https://user:••••@host/?token=••••` (template variables kept). */
export function maskUrlSecrets(url: string, secretParam: RegExp = SECRET_PARAM_NAME): string {
  let out = url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)([^@/?#]*)@/, (_all, head: string, password: string) => `${head}${maskLiteral(password)}@`);
  const q = out.indexOf('?');
  if (q !== -1) {
    const hash = out.indexOf('#', q);
    const query = out.slice(q + 1, hash === -1 ? undefined : hash);
    const masked = query
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq === -1) return pair;
        let name = pair.slice(0, eq);
        try {
          name = decodeURIComponent(name);
        } catch {
          // a malformed escape: judge the raw name
        }
        return secretParam.test(name) ? `${pair.slice(0, eq + 1)}${maskLiteral(pair.slice(eq + 1))}` : pair;
      })
      .join('&');
    out = out.slice(0, q + 1) + masked + (hash === -1 ? '' : out.slice(hash));
  }
  return out;
}

/** A copy of a JSON value with the scalar values of secret-named fields masked (variables kept). */
export function maskSecretFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecretFields);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_FIELD_NAME.test(k) && v !== null && typeof v !== 'object') out[k] = typeof v === 'string' ? maskLiteral(v) : SECRET_MASK;
      else out[k] = maskSecretFields(v);
    }
    return out;
  }
  return value;
}

interface NodeLike {
  type?: unknown;
  params?: unknown;
}

/**
 * The graph as a read-only caller sees it: in each HTTP Request node, secret header values, the
 * URL's password and secret query parameters, and secret-named body fields are masked; template
 * variables (notably `{{credentials.<name>}}`) stay as written. Other nodes are unchanged.
 */
export function maskGraphSecrets<G>(graph: G): G {
  const g = graph as { nodes?: unknown } | null;
  if (!g || typeof g !== 'object' || !Array.isArray(g.nodes)) return graph;
  const nodes = g.nodes.map((node: NodeLike) => {
    if (!node || node.type !== 'http_request' || !node.params || typeof node.params !== 'object') return node;
    const params = { ...(node.params as Record<string, unknown>) };
    if (typeof params.url === 'string') params.url = maskUrlSecrets(params.url);
    if (params.headers && typeof params.headers === 'object') {
      params.headers = Object.fromEntries(
        Object.entries(params.headers as Record<string, unknown>).map(([name, v]) => [
          name,
          SECRET_HEADER_NAME.test(name) && typeof v === 'string' ? maskLiteral(v) : v,
        ]),
      );
    }
    if (params.body !== undefined) params.body = maskBody(params.body);
    return { ...node, params };
  });
  return { ...(graph as object), nodes } as G;
}

/** A body written as JSON text is masked as JSON and written back as text; other text is left alone. */
function maskBody(body: unknown): unknown {
  if (typeof body === 'string' && /^\s*[[{]/.test(body)) {
    try {
      const parsed: unknown = JSON.parse(body);
      const masked = maskSecretFields(parsed);
      return JSON.stringify(masked) === JSON.stringify(parsed) ? body : JSON.stringify(masked);
    } catch {
      return body;
    }
  }
  return maskSecretFields(body);
}

/** A `{{credentials.<name>}}` reference (global: use with matchAll, or take its source). */
export const CREDENTIAL_REFERENCE = /\{\{\s*credentials\.([^{}\s]*?)\s*\}\}/g;

/**
 * The credential names a graph refers to, so a run loads only those (none: no query at all) and an
 * export lists them by name: the `{{credentials.<name>}}` references, and the names nodes take as
 * their `credential` param (Verify signature, HTTP Request, Send Email: every node type names its
 * credential with that one param). A single node (a step test) counts as a graph of one.
 */
export function credentialNames(graph: unknown): string[] {
  const names = new Set<string>();
  for (const m of JSON.stringify(graph).matchAll(CREDENTIAL_REFERENCE)) names.add(m[1] ?? '');
  const nodes = (graph as { nodes?: unknown } | null)?.nodes;
  for (const node of (Array.isArray(nodes) ? nodes : [graph]) as ({ params?: { credential?: unknown } } | null)[]) {
    if (typeof node?.params?.credential === 'string' && node.params.credential !== '') names.add(node.params.credential);
  }
  return [...names];
}
