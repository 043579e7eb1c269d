import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from '@flowdesk/contracts';
import { createService, listen } from '../src/index.ts';

function capture() {
  const lines: Record<string, any>[] = [];
  return { lines, stream: { write: (l: string) => void lines.push(JSON.parse(l)) } };
}

test('health and readiness: /readyz answers 503 with the error body while a dependency is down', async () => {
  let up = true;
  const app = createService({ name: 'svc', logLevel: 'silent', readiness: async () => { if (!up) throw new Error('db down'); } });
  const base = await listen(app, 0);
  try {
    assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok', service: 'svc' });
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    up = false;
    const res = await fetch(`${base}/readyz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { error: 'unavailable', message: 'svc is not ready' });
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'liveness does not depend on the database');
  } finally {
    await app.close();
  }
});

test('a crash inside a handler is a 500 with a masked message; the log has the detail and the request id', async () => {
  const { lines, stream } = capture();
  const app = createService({ name: 'svc', logLevel: 'info', logStream: stream });
  app.get('/boom', async () => {
    throw new Error('connection string postgres://user:pw@db leaked?');
  });
  app.get('/teapot', async () => {
    throw new HttpError('conflict', 'Already exists');
  });
  const base = await listen(app, 0);
  try {
    const res = await fetch(`${base}/boom`, { headers: { 'x-request-id': 'req-42' } });
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: 'internal_error', message: 'Internal server error' });
    const logged = lines.find((l) => l.level === 50);
    assert.ok(logged, 'the error is logged');
    assert.equal(logged.reqId, 'req-42');
    assert.equal(logged.service, 'svc');
    assert.match(logged.err.message, /leaked/);
    const conflict = await fetch(`${base}/teapot`);
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), { error: 'conflict', message: 'Already exists' });
  } finally {
    await app.close();
  }
});

test('credentials in headers never reach the log', async () => {
  const { lines, stream } = capture();
  const app = createService({ name: 'svc', logLevel: 'info', logStream: stream });
  app.get('/echo', async (req) => {
    req.log.info({ headers: req.headers }, 'headers seen');
    return { ok: true };
  });
  const base = await listen(app, 0);
  try {
    await fetch(`${base}/echo`, { headers: { authorization: 'Bearer sekrit-token', 'x-webhook-secret': 'whsec_sekrit', cookie: 'sid=sekrit' } });
    const all = lines.map((l) => JSON.stringify(l)).join('\n');
    assert.match(all, /headers seen/);
    assert.doesNotMatch(all, /sekrit/);
  } finally {
    await app.close();
  }
});

test('unknown route → 404 error body; unknown method on a known route → 404 too, never an HTML page', async () => {
  const app = createService({ name: 'svc', logLevel: 'silent' });
  const base = await listen(app, 0);
  try {
    const res = await fetch(`${base}/nope?x=1`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'not_found', message: 'No route for GET /nope' });
  } finally {
    await app.close();
  }
});
