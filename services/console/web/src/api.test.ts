import { describe, expect, test } from 'vitest';
import { ApiClient, ApiError } from './api.ts';

interface Seen {
  method: string;
  url: string;
  csrf: string | null;
}

/** A fake server: answers in order, records what the client sent. */
function server(answers: Array<(seen: Seen) => Response>) {
  const seen: Seen[] = [];
  const fetchImpl = async (url: string, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const s = { method: init?.method ?? 'GET', url, csrf: headers.get('x-csrf-token') };
    seen.push(s);
    const next = answers.shift();
    if (!next) throw new Error(`unexpected request ${s.method} ${url}`);
    return next(s);
  };
  return { seen, client: new ApiClient(fetchImpl) };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('the API client', () => {
  test('sends the CSRF token from sign-in on writes, never on reads', async () => {
    const { seen, client } = server([
      () => json(201, { user: { id: 'u', email: 'a@b.c', name: 'A', role: 'owner' }, expiresAt: '2030-01-01T00:00:00Z', csrfToken: 'tok-1' }),
      () => json(200, { items: [] }),
      () => json(201, { id: 'k', secret: 'fdk_x' }),
    ]);
    await client.signIn({ email: 'a@b.c', password: 'pw' });
    await client.listApiKeys();
    await client.createApiKey('ci', 'read');
    expect(seen.map((s) => [s.method, s.csrf])).toEqual([
      ['POST', null],
      ['GET', null],
      ['POST', 'tok-1'],
    ]);
  });

  test('a refused CSRF token is renewed from GET /session and the write repeated once', async () => {
    const { seen, client } = server([
      () => json(403, { error: 'forbidden', message: 'Missing or wrong X-CSRF-Token header' }),
      () => json(200, { user: { id: 'u', email: 'a@b.c', name: 'A', role: 'owner' }, csrfToken: 'tok-2' }),
      () => new Response(null, { status: 204 }),
    ]);
    client.setCsrfToken('stale');
    await client.revokeConnectedApp('id-1');
    expect(seen.map((s) => `${s.method} ${s.url} ${s.csrf}`)).toEqual([
      'DELETE /api/v1/connected-apps/id-1 stale',
      'GET /api/v1/session null',
      'DELETE /api/v1/connected-apps/id-1 tok-2',
    ]);
  });

  test('a second CSRF refusal is not retried again, and a 403 for scope is not retried at all', async () => {
    const { seen, client } = server([
      () => json(403, { error: 'forbidden', message: 'wrong X-CSRF-Token' }),
      () => json(200, { user: { id: 'u', email: 'a@b.c', name: 'A', role: 'owner' }, csrfToken: 'tok-3' }),
      () => json(403, { error: 'forbidden', message: 'wrong X-CSRF-Token' }),
      () => json(403, { error: 'forbidden', message: 'This operation requires the mcp:write scope.' }),
    ]);
    client.setCsrfToken('stale');
    await expect(client.createApiKey('x', 'read')).rejects.toBeInstanceOf(ApiError);
    await expect(client.createApiKey('y', 'read')).rejects.toMatchObject({ status: 403, message: /mcp:write/ });
    expect(seen).toHaveLength(4);
  });

  test('errors carry the server message and Retry-After; no session is null, not an error', async () => {
    const { client } = server([
      () => json(429, { error: 'rate_limited', message: 'Too many attempts' }, { 'retry-after': '30' }),
      () => json(401, { error: 'unauthorized', message: 'Sign in' }),
    ]);
    await expect(client.signIn({ email: 'a@b.c', password: 'x' })).rejects.toMatchObject({
      status: 429,
      code: 'rate_limited',
      message: 'Too many attempts',
      retryAfterSeconds: 30,
    });
    expect(await client.session()).toBeNull();
  });

  test('signing out forgets the CSRF token', async () => {
    const { seen, client } = server([() => new Response(null, { status: 204 }), () => json(401, { error: 'unauthorized', message: 'x' })]);
    client.setCsrfToken('tok');
    await client.signOut();
    await expect(client.changePassword('a', 'b')).rejects.toMatchObject({ status: 401 });
    expect(seen[1]!.csrf).toBeNull();
  });
});
