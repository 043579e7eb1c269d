import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { HttpError } from '@flowdesk/contracts';
import { OPENAPI_PATH, type Service } from '@flowdesk/service-kit';
import type { Upstream } from '../adapters/upstream.ts';
import { publicOpenApi, type OpenApiDocument, type UpstreamDocuments } from '../domain/openapi.ts';
import type { Upstream as UpstreamName } from '../domain/upstreams.ts';

/** Swagger UI's own files, served from this service (no CDN). */
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = { 'swagger-ui.css': 'text/css; charset=utf-8', 'swagger-ui-bundle.js': 'text/javascript; charset=utf-8' };

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flowdesk API reference</title>
<link rel="stylesheet" href="/api/v1/docs/swagger-ui.css">
<style>
body{margin:0;font-family:system-ui,sans-serif}.topbar{display:none}
/* Swagger UI's own colours miss WCAG AA (4.5:1) in many places: darker ones, same hues (axe-core in embedded/test/console-browser.test.ts). */
.swagger-ui .info .title small pre.version{background:#5b6170}
.swagger-ui .info .title small.version-stamp{background:#3d6b00}
.swagger-ui .info .title small.version-stamp pre.version{background:#3d6b00}
.swagger-ui .info a.link .url,.swagger-ui .info .url{color:#1f5fa8}
.swagger-ui .btn.authorize{color:#17693f;border-color:#17693f}
.swagger-ui .btn.authorize svg{fill:#17693f}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1c64b0}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#17693f}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#9a4d00}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0f6e5c}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b91c1c}
.swagger-ui .opblock.opblock-head .opblock-summary-method{background:#6b0fc4}
.swagger-ui .opblock.opblock-options .opblock-summary-method{background:#0d5aa7}
.swagger-ui .parameter__in,.swagger-ui .parameter__deprecated,.swagger-ui .prop-format{color:#555}
.swagger-ui .json-schema-2020-12-expand-deep-button{color:#444}
.swagger-ui .json-schema-2020-12__attribute--primary,.swagger-ui .json-schema-2020-12-keyword__name--secondary{color:#444}
.swagger-ui .opblock-summary-path__deprecated{color:#555}
.swagger-ui .response-col_links{color:#555}
.swagger-ui .btn.cancel{color:#b91c1c;border-color:#b91c1c}
.swagger-ui .btn.execute{background-color:#1c64b0;border-color:#1c64b0}
</style>
</head>
<body>
<main id="reference" aria-label="Flowdesk API reference"></main>
<script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script src="/api/v1/docs/init.js"></script>
</body>
</html>`;

/**
 * Swagger UI, plus what its markup lacks for assistive technology: deep links off (they put a link
 * inside each operation's toggle button: nested interactive controls), and a name for every select
 * it renders without one (the server, enum parameters), given as it renders them.
 */
const INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: false, withCredentials: true });
(function () {
  function name(el) {
    if (el.id === 'servers') return 'Server';
    var row = el.closest('tr[data-param-name]');
    if (row) return 'Value of ' + row.getAttribute('data-param-name');
    var media = el.closest('.content-type-wrapper, .response-control-media-type, .body-param-content-type');
    if (media) return 'Media type';
    return 'Choose a value';
  }
  function label(root) {
    root.querySelectorAll('select:not([aria-label]):not([aria-labelledby]), input:not([type=hidden]):not([aria-label]):not([aria-labelledby]), textarea:not([aria-label]):not([aria-labelledby])').forEach(function (el) {
      // A label with text names it already (Swagger UI wraps some in empty ones).
      if (el.labels && Array.prototype.some.call(el.labels, function (l) { return l.textContent.replace(l.contains(el) ? el.textContent : '', '').trim() !== ''; })) return;
      el.setAttribute('aria-label', name(el));
    });
  }
  var root = document.getElementById('reference');
  new MutationObserver(function () { label(root); }).observe(root, { childList: true, subtree: true });
  label(root);
})();`;

/**
 * GET /api/v1/openapi.json and the rendered reference at /api/v1/docs. The document is merged from
 * each upstream's own (GET /openapi.json, generated from its routes' schemas; domain/openapi.ts),
 * fetched over HTTP, in the embedded start as in production, and kept `cacheMs` (default 60 s). It
 * fails soft: a service that does not answer is represented by its last good document, or left out
 * (the description says so, and that copy is kept only `retryMs`, default 5 s); 503 only when none answers.
 */
export function referenceRoutes(opts: {
  upstreams: Readonly<Record<UpstreamName, Pick<Upstream, 'request'>>>;
  publicBaseUrl: string;
  cacheMs?: number;
  retryMs?: number;
  /** How long one service's document is waited for (default 5 s). */
  documentTimeoutMs?: number;
  now: () => Date;
  log?: { warn(obj: object, msg: string): void };
}) {
  let cached: { doc: unknown; until: number } | undefined;
  const lastGood: UpstreamDocuments = {};
  const fetchDocument = async (name: UpstreamName, requestId: string): Promise<OpenApiDocument | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const asked = opts.upstreams[name].request({ method: 'GET', path: OPENAPI_PATH, headers: { accept: 'application/json', 'x-request-id': requestId } });
    try {
      // A service that hangs is one that does not answer: the document waits for it only so long.
      const answer = await Promise.race([
        asked,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            void asked.then((late) => late.body.dump()).catch(() => {});
            reject(new Error(`no answer within ${opts.documentTimeoutMs ?? 5_000} ms`));
          }, opts.documentTimeoutMs ?? 5_000);
        }),
      ]).finally(() => clearTimeout(timer));
      if (answer.status !== 200) {
        await answer.body.dump();
        throw new Error(`status ${answer.status}`);
      }
      return (lastGood[name] = (await answer.body.json()) as OpenApiDocument);
    } catch (err) {
      opts.log?.warn({ err, upstream: name }, 'OpenAPI document of an upstream unavailable; the public document goes without it');
      return lastGood[name];
    }
  };
  let refreshing: Promise<void> | undefined;
  const refresh = async (requestId: string, now: number) => {
    const names = Object.keys(opts.upstreams) as UpstreamName[];
    const docs = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await fetchDocument(n, requestId)] as const))) as UpstreamDocuments;
    const missing = names.filter((n) => !docs[n]);
    if (missing.length === names.length) throw new HttpError('unavailable', 'No service gave its API document');
    cached = { doc: publicOpenApi(docs, opts.publicBaseUrl, missing), until: now + (missing.length ? (opts.retryMs ?? 5_000) : (opts.cacheMs ?? 60_000)) };
  };
  return async (app: Service) => {
    app.get('/openapi.json', { schema: { hide: true } }, async (req, reply) => {
      const now = opts.now().getTime();
      if (!cached || cached.until <= now) {
        // One refresh at a time: requests meanwhile wait for it rather than each asking every service.
        refreshing ??= refresh(req.id, now).finally(() => (refreshing = undefined));
        await refreshing;
      }
      const current = cached!;
      // A browser keeps it no longer than this replica does (a partial copy, a few seconds).
      reply.header('cache-control', `public, max-age=${Math.max(1, Math.ceil((current.until - now) / 1000))}`);
      return current.doc;
    });
    const page = async (_req: unknown, reply: import('fastify').FastifyReply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
        .send(PAGE);
    app.get('/docs', page);
    app.get('/docs/init.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(INIT));
    app.get<{ Params: { file: string } }>('/docs/:file', async (req, reply) => {
      const type = ASSETS[req.params.file];
      if (!type) throw new HttpError('not_found', `No file ${req.params.file}`);
      reply.header('cache-control', 'public, max-age=86400');
      return reply.type(type).send(await readFile(path.join(swaggerDir, req.params.file)));
    });
  };
}
