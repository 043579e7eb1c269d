// Login throttling as an attacker meets it: fast and parallel guesses against one account, guesses
// spread over many accounts from one address, the password change and the OAuth login form; and the
// consent page's one-time form token, spent atomically however many posts carry it at once.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { delayAfter, DEFAULT_THROTTLE, LoginThrottle, TooManyAttempts } from '../src/domain/login-throttle.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

let auth: TestAuth;
let user: { id: string; email: string; password: string };
/** The clock stands still unless a test moves it: waits are computed, never slept. */
let now: Date;
const at = (d: Date) => {
  now = d;
  auth.setNow(d);
};
const later = (ms: number) => at(new Date(now.getTime() + ms));

before(async () => {
  auth = await startTestAuth({
    beforeListen: (app) => {
      app.get('/callback', { logLevel: 'silent' }, async (_req, reply) => reply.type('text/html').send('ok'));
    },
  });
  user = await auth.newUser();
});
after(async () => {
  assert.ok(!auth.logs.join('\n').includes(user.password), 'a password reached the log');
  await auth.close();
});
beforeEach(async () => {
  await auth.db.exec('DELETE FROM auth.login_throttle');
  at(new Date());
});

const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
  auth.call('POST', '/auth/v1/sessions', { body: { email, password }, headers });
const statuses = (list: { status: number }[]) => list.map((r) => r.status);
const count = (list: number[], status: number) => list.filter((s) => s === status).length;

describe('sign-in', () => {
  test('the backoff: 5 free attempts, then 1 s, 2 s, 4 s … capped at 15 minutes', () => {
    const p = DEFAULT_THROTTLE.account;
    assert.deepEqual(
      [1, 5, 6, 7, 8, 9].map((n) => delayAfter(p, n)),
      [0, 0, 1000, 2000, 4000, 8000],
    );
    assert.equal(delayAfter(p, 40), 15 * 60_000);
    assert.equal(delayAfter(p, 10_000), 15 * 60_000);
    assert.equal(delayAfter(DEFAULT_THROTTLE.address, 20), 0);
  });

  test('30 wrong guesses fast, then the right password: refused (429 with Retry-After) until the wait is over', async () => {
    const results: number[] = [];
    for (let i = 0; i < 30; i++) results.push((await signIn(user.email, `wrong guess ${i}`)).status);
    // 6 passwords checked (5 free + the one that opened the first wait), 24 refused unchecked.
    assert.deepEqual([count(results, 401), count(results, 429)], [6, 24], results.join(','));
    const right = await signIn(user.email, user.password);
    assert.equal(right.status, 429, 'a correct password does not pass a running wait');
    assert.equal(right.body.error, 'too_many_requests');
    assert.equal(right.headers.get('retry-after'), '1');
    // The same email spelled differently is the same account.
    assert.equal((await signIn(user.email.toUpperCase(), user.password)).status, 429);

    later(1000);
    const after = await signIn(user.email, user.password);
    assert.equal(after.status, 201, 'once the wait is over the right password works');
    // The success cleared the account's count. The address keeps its count (every attempt from it
    // counted, also those the account's wait refused): that one stays the attacker's problem.
    const rows = (await auth.db.exec('SELECT key, failures FROM auth.login_throttle ORDER BY key')).rows;
    assert.deepEqual(
      rows.map((r) => r.key),
      ['address:127.0.0.1'],
    );
    assert.ok(Number(rows[0]!.failures) > DEFAULT_THROTTLE.address.free);
  });

  test('the waits double with every further attempt, whatever the pace', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await signIn(user.email, 'nope nope nope')).status, 401);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      assert.equal((await signIn(user.email, 'nope nope nope')).status, 401);
      const refused = await signIn(user.email, 'nope nope nope');
      assert.equal(refused.status, 429);
      const wait = Number(refused.headers.get('retry-after'));
      waits.push(wait);
      later(wait * 1000);
    }
    assert.deepEqual(waits, [1, 2, 4, 8, 16, 32]);
  });

  test('30 parallel guesses: no more passwords checked than sequential ones; then the right one is refused', async () => {
    const results = statuses(await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(user.email, `parallel guess ${i}`))));
    assert.deepEqual([count(results, 401), count(results, 429)], [6, 24], results.join(','));
    assert.equal((await signIn(user.email, user.password)).status, 429);
  });

  test('attempts within the free ones are never refused, whatever order their clocks were read in', async () => {
    // Parallel requests read the clock a moment apart and reach the row in any order: an attempt
    // whose clock is older than its neighbour's must still pass (it got 429 under load before).
    const throttle = new LoginThrottle(auth.prisma);
    const t = Date.now();
    for (let i = 0; i < 5; i++) await throttle.reserve(`order-${i}@example.test`, '192.0.2.7', new Date(t + 50 - i * 10));
    const rows = (await auth.db.exec("SELECT failures FROM auth.login_throttle WHERE key = 'address:192.0.2.7'")).rows;
    assert.equal(Number(rows[0]!.failures), 5);
    // Past the free ones the wait is still there, for the older clock too.
    const strict = new LoginThrottle(auth.prisma, { ...DEFAULT_THROTTLE, address: { ...DEFAULT_THROTTLE.address, free: 5 } });
    await strict.reserve('order-5@example.test', '192.0.2.7', new Date(t + 60));
    await assert.rejects(strict.reserve('order-6@example.test', '192.0.2.7', new Date(t + 5)), TooManyAttempts);
  });

  test('per address: guesses spread over many accounts from one address are throttled too; a claimed X-Forwarded-For from an untrusted caller changes nothing', async () => {
    // Trust only a proxy this caller is not: its X-Forwarded-For is then just a header.
    // A small address budget (3 free) keeps the test short; the rule is the same as with 20.
    const strict = await startTestAuth({
      deps: { trustProxy: '10.255.255.1', throttle: { ...DEFAULT_THROTTLE, address: { ...DEFAULT_THROTTLE.address, free: 3 } } },
    });
    strict.setNow(now);
    try {
      const other = await strict.newUser();
      const results: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await strict.call('POST', '/auth/v1/sessions', {
          body: { email: `nobody-${i}@example.test`, password: 'some password' },
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
        });
        results.push(res.status);
      }
      // 3 free per address, the 4th opens the wait; the accounts and the claimed addresses all differed.
      assert.deepEqual(results, [401, 401, 401, 401, 429, 429]);
      const right = await strict.call('POST', '/auth/v1/sessions', { body: { email: other.email, password: other.password } });
      assert.equal(right.status, 429, 'the address waits, even for a correct password of another account');
    } finally {
      await strict.close();
    }
  });
});

describe('password change', () => {
  test('wrong current passwords are throttled like sign-ins', async () => {
    const token = (await signIn(user.email, user.password)).body.token as string;
    const change = (currentPassword: string) =>
      auth.call('POST', '/auth/v1/account/password', { token, body: { currentPassword, newPassword: 'a new password 123' } });
    const results: number[] = [];
    for (let i = 0; i < 8; i++) results.push((await change(`guess ${i} guess`)).status);
    assert.deepEqual(results, [401, 401, 401, 401, 401, 401, 429, 429]);
    const right = await change(user.password);
    assert.equal(right.status, 429);
    assert.ok(Number(right.headers.get('retry-after')) >= 1);
  });
});

describe('the OAuth login + consent page', () => {
  const REDIRECT = () => `${auth.baseUrl}/callback`;
  async function client(): Promise<string> {
    const res = await auth.call('POST', '/oauth/register', {
      body: { client_name: 'Throttle App', redirect_uris: [REDIRECT()], token_endpoint_auth_method: 'none' },
    });
    assert.equal(res.status, 201);
    return res.body.client_id;
  }
  async function consentPage(clientId: string) {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT(),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st',
    });
    const res = await fetch(`${auth.baseUrl}/oauth/authorize?${query.toString()}`);
    const html = await res.text();
    return { csrf: /name="csrf_token" value="([^"]+)"/.exec(html)![1]!, cookie: res.headers.get('set-cookie')!.split(';')[0]! };
  }
  async function post(form: { csrf: string; cookie: string }, password: string) {
    const body = new URLSearchParams({ csrf_token: form.csrf, decision: 'approve', email: user.email, password, scope: 'mcp:read' });
    const res = await fetch(`${auth.baseUrl}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body,
    });
    const html = await res.text();
    return { status: res.status, html, next: /name="csrf_token" value="([^"]+)"/.exec(html)?.[1], retryAfter: res.headers.get('retry-after') };
  }
  const accountFailures = async () =>
    Number((await auth.db.exec(`SELECT failures FROM auth.login_throttle WHERE key = $1`, [`account:${user.email}`])).rows[0]?.failures ?? 0);

  test('24 parallel posts of one form token: the password is checked once, one answer, 23 "already used"', async () => {
    const clientId = await client();
    const wrong = await consentPage(clientId);
    const results = await Promise.all(Array.from({ length: 24 }, () => post(wrong, 'a wrong password')));
    assert.deepEqual([results.filter((r) => r.status === 401).length, results.filter((r) => r.status === 400).length], [1, 23], statuses(results).join(','));
    assert.equal(await accountFailures(), 1, 'one password check counted');
    for (const r of results.filter((x) => x.status === 400)) assert.match(r.html, /already used/);

    // With the right password: one code, whatever the number of posts.
    const right = await consentPage(clientId);
    const approved = await Promise.all(Array.from({ length: 24 }, () => post(right, user.password)));
    assert.deepEqual([approved.filter((r) => r.status === 302).length, approved.filter((r) => r.status === 400).length], [1, 23], statuses(approved).join(','));
  });

  test('wrong passwords on the form are throttled per account, across consent pages; the right one waits too', async () => {
    const clientId = await client();
    const results: number[] = [];
    // Three wrong passwords on each of two pages (a page alone allows five).
    for (const page of [await consentPage(clientId), await consentPage(clientId)]) {
      let form = page;
      for (let i = 0; i < 3; i++) {
        const res = await post(form, `form guess ${i}`);
        results.push(res.status);
        form = { ...form, csrf: res.next! };
      }
    }
    assert.deepEqual(results, [401, 401, 401, 401, 401, 401]);
    const third = await consentPage(clientId);
    const right = await post(third, user.password);
    assert.equal(right.status, 429);
    assert.match(right.html, /role="alert">Too many sign-in attempts\. Try again in 1 s\./);
    assert.equal(right.retryAfter, '1');
    // The page stays usable: after the wait, the same page signs in.
    later(1000);
    const after = await post({ ...third, csrf: right.next! }, user.password);
    assert.equal(after.status, 302);
  });
});
