import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { HttpError } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import type { Upstream } from '../adapters/upstream.ts';
import { publicOpenApi } from '../domain/openapi.ts';

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
<style>body{margin:0;font-family:system-ui,sans-serif}.topbar{display:none}</style>
</head>
<body>
<main id="reference" aria-label="Flowdesk API reference"></main>
<script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script src="/api/v1/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true, withCredentials: true });`;

/** GET /api/v1/openapi.json and the rendered reference at /api/v1/docs. */
export function referenceRoutes(opts: { workspace: Upstream; publicBaseUrl: string; cacheMs?: number; now: () => Date }) {
  let cached: { doc: unknown; until: number } | undefined;
  return async (app: Service) => {
    app.get('/openapi.json', async (req, reply) => {
      const now = opts.now().getTime();
      if (!cached || cached.until <= now) {
        let answer;
        try {
          answer = await opts.workspace.request({ method: 'GET', path: '/openapi.json', headers: { accept: 'application/json', 'x-request-id': req.id } });
        } catch {
          throw new HttpError('unavailable', 'The workspace API is unavailable');
        }
        if (answer.status !== 200) {
          await answer.body.dump();
          throw new HttpError('unavailable', 'The workspace API did not give its document');
        }
        cached = { doc: publicOpenApi((await answer.body.json()) as Record<string, unknown>, opts.publicBaseUrl), until: now + (opts.cacheMs ?? 60_000) };
      }
      reply.header('cache-control', 'public, max-age=60');
      return cached.doc;
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
