import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { HttpError } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';

/** What the browser is allowed to do on console pages. Mantine sets inline styles, never inline scripts. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Flowdesk</title></head><body><main><h1>The console is not built</h1><p>Run <code>npm run build:web -w @flowdesk/console</code> (npm start does it for you).</p></main></body></html>`;

/**
 * The front end's top-level page paths (its route table, web/src/routes.tsx, which routes.test.ts
 * checks against this list), each with what is under it (/workflows/:id, /workflows/:id/runs,
 * /runs/:id): they answer 200, anything else the app's "Page not found" with 404.
 */
export const PAGES = ['/sign-in', '/sign-up', '/setup', '/settings', '/workflows', '/runs', '/projects', '/tasks', '/calendar', '/notes'];
const isConsolePage = (pathname: string) => PAGES.some((p) => pathname === p || pathname.startsWith(`${p}/`));

/**
 * The built front end (dist/web): hashed assets cached for good, and index.html for every other
 * page path, so /settings/api-keys reloads into the app. Paths with a file extension that do not
 * exist are 404s, not the app.
 */
const attribute = (v: string) => v.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * Settings the front end reads from the page itself (no request, no inline script under the CSP):
 * `<meta name="flowdesk-trace-url" content="…">` when a trace URL template is configured.
 */
export function withPageSettings(html: string, settings: { traceUrlTemplate?: string }): string {
  if (!settings.traceUrlTemplate) return html;
  return html.replace('</head>', `<meta name="flowdesk-trace-url" content="${attribute(settings.traceUrlTemplate)}">\n</head>`);
}

export function webRoutes(webRoot: string, settings: { traceUrlTemplate?: string } = {}) {
  return async (app: Service) => {
    const index = path.join(webRoot, 'index.html');
    const built = existsSync(index);
    if (built) {
      await app.register(fastifyStatic, {
        root: webRoot,
        prefix: '/',
        wildcard: false,
        index: false,
        setHeaders: (res, file) => {
          res.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
          res.header('x-content-type-options', 'nosniff');
        },
      });
    }
    const html = withPageSettings(built ? await readFile(index, 'utf8') : NOT_BUILT, settings);
    app.get('/*', async (req, reply) => {
      const pathname = req.url.split('?')[0]!;
      if (/\.[a-z0-9]+$/i.test(pathname) || pathname.startsWith('/api/')) throw new HttpError('not_found', `No route for GET ${pathname}`);
      // Any other path is the app (it shows its own "Page not found"), but only the console's pages answer 200.
      return reply
        .code(isConsolePage(pathname) ? 200 : 404)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CONSOLE_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        .send(html);
    });
    app.get('/', async (_req, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CONSOLE_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        .send(html),
    );
  };
}
