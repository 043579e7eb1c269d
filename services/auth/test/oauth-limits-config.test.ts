// The limits at the OAuth edge are configurable (docs/configuration.md): OAUTH_AUTHORIZE_RATE_LIMIT,
// OAUTH_CLIENT_METADATA_RATE_LIMIT and OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT, as `<count>/<window>`.
// A configured value is what the running service enforces (the defaults, 60 and 20 per 10 minutes,
// would let every request below through), and a bad value stops the start naming the variable.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { oauthLimitsFrom, parseRateLimit } from '../src/config.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

let auth: TestAuth;
let clientId: string;
const REDIRECT = 'http://127.0.0.1:9/callback';

before(async () => {
  const limits = oauthLimitsFrom({
    OAUTH_AUTHORIZE_RATE_LIMIT: '3/10m',
    OAUTH_CLIENT_METADATA_RATE_LIMIT: '2/1h',
    OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT: '3/1h',
  });
  auth = await startTestAuth({ deps: { ...limits, oauthSweepIntervalMs: 0 } });
  const registered = await auth.call('POST', '/oauth/register', {
    body: { client_name: 'limits', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
  });
  assert.equal(registered.status, 201);
  clientId = registered.body.client_id;
});
after(() => auth?.close());

async function authorizeFrom(source: string, client = clientId) {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: client,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
    state: 's',
  });
  const dispatcher = new Agent({ localAddress: source });
  try {
    const res = await fetch(`${auth.baseUrl}/oauth/authorize?${q.toString()}`, { redirect: 'manual', dispatcher });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), html: await res.text() };
  } finally {
    await dispatcher.close();
  }
}

test('OAUTH_AUTHORIZE_RATE_LIMIT=3/10m: the 4th sign-in page from one address in 10 minutes is refused (429), another address still gets one', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await authorizeFrom('127.0.0.60')).status, 200, `page ${i + 1}`);
  const refused = await authorizeFrom('127.0.0.60');
  assert.equal(refused.status, 429);
  assert.match(refused.html, /Too many sign-in pages were opened from this address/);
  assert.ok(Number(refused.retryAfter) > 0 && Number(refused.retryAfter) <= 600, `Retry-After within the 10-minute window: ${refused.retryAfter}`);
  assert.equal((await authorizeFrom('127.0.0.61')).status, 200);
});

// Each document URL names a loopback host the SSRF guard refuses: a fetch that was admitted fails at
// once with the guard's message; one over a limit is refused before any fetch with the limit's message.
const documentUrl = () => `https://127.0.0.1:9/${randomBytes(6).toString('hex')}/client.json`;

test('OAUTH_CLIENT_METADATA_RATE_LIMIT=2/1h: the 3rd document fetched for one address is refused; the global limit (3/1h) then refuses another address', async () => {
  for (let i = 0; i < 2; i++) {
    const page = await authorizeFrom('127.0.0.62', documentUrl());
    assert.doesNotMatch(page.html, /Too many client metadata documents/, `fetch ${i + 1} is admitted`);
  }
  const perAddress = await authorizeFrom('127.0.0.62', documentUrl());
  assert.match(perAddress.html, /Too many client metadata documents fetched for this address; try again in \d+ s/);
  const third = await authorizeFrom('127.0.0.63', documentUrl());
  assert.doesNotMatch(third.html, /Too many client metadata documents/, 'another address: its first fetch, the 3rd of all');
  const overall = await authorizeFrom('127.0.0.64', documentUrl());
  assert.match(overall.html, /Too many client metadata documents are being fetched right now/);
});

test('the variables: <count>/<window>; unset gives the defaults; a bad value names the variable', () => {
  assert.deepEqual(oauthLimitsFrom({}), {
    authorizeRateLimit: { max: 60, windowMs: 600_000 },
    clientMetadataRateLimit: { max: 20, windowMs: 600_000 },
    clientMetadataGlobalRateLimit: { max: 1000, windowMs: 600_000 },
  });
  assert.deepEqual(oauthLimitsFrom({ OAUTH_CLIENT_METADATA_RATE_LIMIT: '5/1h' }).clientMetadataGlobalRateLimit, { max: 250, windowMs: 3_600_000 });
  assert.deepEqual(parseRateLimit('X', ' 100 / 30s ', { max: 1, windowMs: 1 }), { max: 100, windowMs: 30_000 });
  for (const bad of ['0/10m', '20', '20/', '20/ten', '-1/10m', 'x/10m', '20/0'])
    assert.throws(() => oauthLimitsFrom({ OAUTH_AUTHORIZE_RATE_LIMIT: bad }), /OAUTH_AUTHORIZE_RATE_LIMIT must be/, bad);
});
