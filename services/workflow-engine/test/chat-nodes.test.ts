/**
 * Slack and Discord nodes (docs/workflow-engine.md, "Slack", "Discord") against stand-ins for Slack's
 * Web API, a Slack incoming webhook and a Discord webhook, started here on loopback, that check the
 * request as the services document it (method, path, Authorization: Bearer, Content-Type:
 * application/json; charset=utf-8, the body's fields) and answer as they do: chat.postMessage's
 * `{ ok: true, channel, ts }` and `{ ok: false, error }` with HTTP 200, Slack's 429 with Retry-After,
 * Discord's 204 and (`?wait=true`) 200 with the message, Discord's 429 with `retry_after` in its body.
 * Runs go through the executor with the guarded HTTP client (loopback allowed, as in HTTP Request's
 * tests) and its retry policy; the token and webhook URLs never appear in what a run records.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkflowNode } from '@flowdesk/contracts';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import type { RunOptions } from '../src/domain/executor.ts';
import type { CredentialValue } from '../src/domain/ports.ts';
import { fixedEvent, json, startServer, type Received, type TestServer, runChain } from './support.ts';

const TOKEN = 'xoxb-1111-2222-SeCrEtToKeN';
const SLACK_HOOK_PATH = '/services/T0001/B0001/hOoKsEcReT';
const DISCORD_HOOK_PATH = '/api/webhooks/123456/dIsCoRdSeCrEt';
const JSON_UTF8 = 'application/json; charset=utf-8';

let slack: TestServer;
let discord: TestServer;
let teams: TestServer;
const TEAMS_HOOK_PATH = '/workflows/4f1c/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=TeAmSsIgNaTuRe';
let http: GuardedHttpClient;
let options: RunOptions;

/** What a stand-in refuses: the request is not as the service documents it. */
function wrongShape(req: Received): string | null {
  if (req.method !== 'POST') return `method ${req.method}`;
  if (req.headers['content-type'] !== JSON_UTF8) return `content-type ${req.headers['content-type']}`;
  try {
    JSON.parse(req.body);
  } catch {
    return 'body is not JSON';
  }
  return null;
}

before(async () => {
  slack = await startServer((req, res) => {
    const wrong = wrongShape(req);
    if (req.url === '/api/chat.postMessage') {
      // Slack's Web API answers 200 with ok: false for its own errors.
      if (wrong) return json(res, 200, { ok: false, error: 'invalid_request', wrong });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, 200, { ok: false, error: 'invalid_auth' });
      const body = JSON.parse(req.body) as { channel?: string; text?: string; blocks?: unknown; thread_ts?: string };
      if (!body.channel) return json(res, 200, { ok: false, error: 'channel_not_found' });
      if (body.channel === 'C_MISSING') return json(res, 200, { ok: false, error: 'channel_not_found' });
      if (body.channel === 'C_BUSY') {
        const seen = slack.received.filter((r) => r.body.includes('C_BUSY')).length;
        if (seen === 1) return json(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': '2' });
      }
      if (body.channel === 'C_DOWN') return json(res, 500, { ok: false, error: 'internal_error' });
      return json(res, 200, {
        ok: true,
        channel: body.channel,
        ts: '1700000000.000100',
        message: { type: 'message', text: body.text, ts: '1700000000.000100' },
      });
    }
    if (req.url === SLACK_HOOK_PATH) {
      if (wrong) return void res.writeHead(400, { 'content-type': 'text/html' }).end('invalid_payload');
      if (req.headers.authorization) return void res.writeHead(400, { 'content-type': 'text/html' }).end('unexpected authorization');
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('no_service');
  });
  discord = await startServer((req, res) => {
    const wrong = wrongShape(req);
    const url = new URL(req.url, 'http://x');
    if (wrong) return json(res, 400, { message: 'Cannot send an empty message', code: 50006, wrong });
    const body = JSON.parse(req.body) as { content?: string; username?: string; embeds?: unknown[] };
    if (url.pathname === '/api/webhooks/429/busy') {
      const seen = discord.received.filter((r) => r.url.startsWith('/api/webhooks/429/busy')).length;
      if (seen === 1) return json(res, 429, { message: 'You are being rate limited.', retry_after: 1.5, global: false });
    } else if (url.pathname !== DISCORD_HOOK_PATH) return json(res, 401, { message: 'Invalid Webhook Token', code: 50027 });
    if (url.searchParams.get('wait') !== 'true') return void res.writeHead(204).end();
    json(res, 200, {
      id: '1180000000000000001',
      type: 0,
      channel_id: '1170000000000000001',
      content: body.content ?? '',
      embeds: body.embeds ?? [],
      author: { username: body.username ?? 'Hook' },
    });
  });
  // A Teams workflow ("When a Teams webhook request is received"): a message with Adaptive Card attachments, answered 202.
  teams = await startServer((req, res) => {
    const wrong = wrongShape(req);
    const url = new URL(req.url, 'http://x');
    if (url.searchParams.get('sig') === 'busy') {
      const seen = teams.received.filter((r) => r.url.includes('sig=busy')).length;
      if (seen === 1) return json(res, 429, { error: { code: 'WorkflowRequestsThrottled', message: 'Rate limit is exceeded.' } }, { 'retry-after': '3' });
    } else if (url.searchParams.get('sig') !== 'TeAmSsIgNaTuRe')
      return json(res, 401, { error: { code: 'DirectApiAuthorizationRequired', message: 'The request must be authenticated.' } });
    const body = wrong ? null : (JSON.parse(req.body) as { type?: string; attachments?: { contentType?: string; content?: { type?: string } }[] });
    if (
      !body ||
      body.type !== 'message' ||
      body.attachments?.[0]?.contentType !== 'application/vnd.microsoft.card.adaptive' ||
      body.attachments[0].content?.type !== 'AdaptiveCard'
    )
      return json(res, 400, { error: { code: 'InvalidRequestContent', message: wrong ?? 'not a message with an Adaptive Card' } });
    res.writeHead(202).end();
  });
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
  options = { slackNode: { apiUrl: `${slack.url}/api/` } };
});
after(async () => {
  await http.close();
  await slack.close();
  await discord.close();
  await teams.close();
});

const credentials = (): Map<string, CredentialValue> =>
  new Map<string, CredentialValue>([
    ['slack_bot', { type: 'slack_bot', fields: { token: TOKEN } }],
    ['slack_hook', { type: 'webhook_url', fields: { url: `${slack.url}${SLACK_HOOK_PATH}` } }],
    ['slack_gone', { type: 'webhook_url', fields: { url: `${slack.url}/services/T0001/B0001/revoked` } }],
    ['discord_hook', { type: 'webhook_url', fields: { url: `${discord.url}${DISCORD_HOOK_PATH}` } }],
    ['teams_hook', { type: 'webhook_url', fields: { url: `${teams.url}${TEAMS_HOOK_PATH}` } }],
    ['teams_revoked', { type: 'webhook_url', fields: { url: `${teams.url}/workflows/4f1c/triggers/manual/paths/invoke?sig=old` } }],
    ['teams_busy', { type: 'webhook_url', fields: { url: `${teams.url}/workflows/4f1c/triggers/manual/paths/invoke?sig=busy` } }],
    ['discord_busy', { type: 'webhook_url', fields: { url: `${discord.url}/api/webhooks/429/busy` } }],
  ]);

let seq = 0;
async function run(nodes: WorkflowNode[], extra: { http?: GuardedHttpClient; options?: RunOptions } = {}) {
  const ev = fixedEvent(`evt-chat-${++seq}`, { order: { id: 'A-17', note: 'say "hi", then } ] {{' }, customer: 'Ada' });
  return runChain(nodes, ev, { http: extra.http ?? http, credentials: credentials() }, extra.options ?? options);
}

const node = (id: string, type: 'slack' | 'discord' | 'teams', params: Record<string, unknown>, more: Partial<WorkflowNode> = {}): WorkflowNode =>
  ({ id, type, params, ...more }) as WorkflowNode;

const since = (server: TestServer, n: number) => server.received.slice(n);

test('Slack chat.postMessage: POST /api/chat.postMessage with Bearer token and JSON; channel, text, blocks, thread_ts; output is Slack’s answer', async () => {
  const start = slack.received.length;
  const { record } = await run([
    node('post', 'slack', {
      credential: 'slack_bot',
      channel: ' C0123 ',
      text: 'Order {{trigger.order.id}} paid',
      blocks: '[{"type":"section","text":{"type":"mrkdwn","text":"*{{trigger.order.note}}*"}}]',
      threadTs: '1699999999.000001',
    }),
  ]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const [req, ...more] = since(slack, start);
  assert.equal(more.length, 0);
  assert.equal(req!.method, 'POST');
  assert.equal(req!.url, '/api/chat.postMessage');
  assert.equal(req!.headers.authorization, `Bearer ${TOKEN}`);
  assert.equal(req!.headers['content-type'], JSON_UTF8);
  assert.deepEqual(JSON.parse(req!.body), {
    channel: 'C0123',
    text: 'Order A-17 paid',
    // Parsed before rendering: the quotes and brackets of the value stay inside its string.
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*say "hi", then } ] {{*' } }],
    thread_ts: '1699999999.000001',
  });
  const output = record.steps[0]!.output as { ok: boolean; ts: string; channel: string };
  assert.equal(output.ok, true);
  assert.equal(output.ts, '1700000000.000100');
  assert.equal(output.channel, 'C0123');
});

test("Slack's HTTP 200 with ok: false fails the step with Slack's error, recorded with its answer", async () => {
  const { record } = await run([node('post', 'slack', { credential: 'slack_bot', channel: 'C_MISSING', text: 'hi' })]);
  assert.equal(record.status, 'failed');
  assert.match(record.error!, /Slack refused the message: channel_not_found/);
  assert.deepEqual(record.steps[0]!.output, { ok: false, error: 'channel_not_found' });
});

test("Slack's 429 feeds the retry policy: it waits Retry-After and posts again; a 5xx is never repeated (it may have posted)", async () => {
  const start = slack.received.length;
  const busy = await run([node('post', 'slack', { credential: 'slack_bot', channel: 'C_BUSY', text: 'hi' }, { retry: { attempts: 3, on: ['429', '5xx'] } })]);
  assert.equal(busy.record.status, 'succeeded', busy.record.error ?? '');
  assert.deepEqual(busy.sleeps, [2000], "Slack's Retry-After: 2");
  assert.equal(busy.record.steps[0]!.attempts, 2);
  assert.match(busy.record.steps[0]!.attemptErrors![0]!, /Slack answered HTTP 429/);
  assert.equal(since(slack, start).length, 2);

  const mid = slack.received.length;
  const down = await run([node('post', 'slack', { credential: 'slack_bot', channel: 'C_DOWN', text: 'hi' }, { retry: { attempts: 3, on: ['429', '5xx'] } })]);
  assert.equal(down.record.status, 'failed');
  assert.match(down.record.error!, /Slack answered HTTP 500/);
  assert.equal(since(slack, mid).length, 1, 'sent once');
  assert.deepEqual(down.sleeps, []);
});

test('Slack incoming webhook: POST the credential’s URL with { text, blocks } and no Authorization; "ok" is { ok: true }; an error answer fails with its text', async () => {
  const start = slack.received.length;
  const { record } = await run([
    node('hook', 'slack', { mode: 'webhook', credential: 'slack_hook', text: 'Hello {{trigger.customer}}', blocks: '[{"type":"divider"}]' }),
  ]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const [req] = since(slack, start);
  assert.equal(req!.url, SLACK_HOOK_PATH);
  assert.equal(req!.headers['content-type'], JSON_UTF8);
  assert.deepEqual(JSON.parse(req!.body), { text: 'Hello Ada', blocks: [{ type: 'divider' }] });
  assert.deepEqual(record.steps[0]!.output, { ok: true });

  const gone = await run([node('hook', 'slack', { mode: 'webhook', credential: 'slack_gone', text: 'x' })]);
  assert.equal(gone.record.status, 'failed');
  assert.match(gone.record.error!, /Slack answered HTTP 404: no_service/);
});

test('a credential of the wrong type, blocks that are not JSON, and an empty channel fail the step without a request', async () => {
  const start = slack.received.length;
  const wrongType = await run([node('post', 'slack', { credential: 'slack_hook', channel: 'C1', text: 'x' })]);
  assert.match(wrongType.record.error!, /credential "slack_hook" is of type webhook_url; this node takes a credential of type slack_bot/);
  const badBlocks = await run([node('post', 'slack', { credential: 'slack_bot', channel: 'C1', text: 'x', blocks: '[{"type":' })]);
  assert.match(badBlocks.record.error!, /blocks is not valid JSON/);
  const noChannel = await run([node('post', 'slack', { credential: 'slack_bot', channel: '{{trigger.missing}}', text: 'x' })]);
  assert.match(noChannel.record.error!, /channel is empty/);
  assert.equal(since(slack, start).length, 0);
});

test('Discord webhook: POST ?wait=true with { content, username, embeds } outputs the posted message; wait: false gets 204 and { ok: true }', async () => {
  const start = discord.received.length;
  const { record } = await run([
    node('msg', 'discord', {
      credential: 'discord_hook',
      content: 'Order {{trigger.order.id}} paid',
      username: 'Flowdesk',
      embeds: '[{"title":"{{trigger.order.note}}","color":5814783}]',
    }),
    node('quiet', 'discord', { credential: 'discord_hook', content: 'again', wait: false }),
  ]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const [first, second] = since(discord, start);
  assert.equal(first!.method, 'POST');
  assert.equal(first!.url, `${DISCORD_HOOK_PATH}?wait=true`);
  assert.equal(first!.headers['content-type'], JSON_UTF8);
  assert.deepEqual(JSON.parse(first!.body), {
    content: 'Order A-17 paid',
    username: 'Flowdesk',
    embeds: [{ title: 'say "hi", then } ] {{', color: 5814783 }],
  });
  assert.equal((record.steps[0]!.output as { id: string }).id, '1180000000000000001');
  assert.equal(second!.url, DISCORD_HOOK_PATH);
  assert.deepEqual(JSON.parse(second!.body), { content: 'again' });
  assert.deepEqual(record.steps[1]!.output, { ok: true });
});

test("Discord's 429 with retry_after (seconds, in its body) feeds the retry policy; without a policy it fails with Discord's message", async () => {
  const start = discord.received.length;
  const { record, sleeps } = await run([node('msg', 'discord', { credential: 'discord_busy', content: 'hi' }, { retry: { attempts: 2, on: ['429'] } })]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(sleeps, [2000], 'retry_after 1.5 s, rounded up to whole seconds');
  assert.equal(since(discord, start).length, 2);

  const empty = await run([node('msg', 'discord', { credential: 'discord_hook', content: '{{trigger.missing}}' })]);
  assert.match(empty.record.error!, /content is empty/);
});

test('Teams workflow webhook: POST a message with an Adaptive Card made of title and text (or written whole); 202 is { ok: true, status: 202 }', async () => {
  const start = teams.received.length;
  const { record } = await run([
    node('card', 'teams', { credential: 'teams_hook', title: 'Order {{trigger.order.id}}', text: '{{trigger.order.note}}' }),
    node('own', 'teams', {
      credential: 'teams_hook',
      card: '{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock","text":"{{trigger.customer}}"}]}',
    }),
  ]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const [first, second] = since(teams, start);
  assert.equal(first!.method, 'POST');
  assert.equal(first!.url, TEAMS_HOOK_PATH, 'the URL as stored, its signature included');
  assert.equal(first!.headers['content-type'], JSON_UTF8);
  const attachment = (JSON.parse(first!.body) as { attachments: { contentType: string; content: { body: { text: string }[] } }[] }).attachments[0]!;
  assert.equal(attachment.contentType, 'application/vnd.microsoft.card.adaptive');
  assert.deepEqual(
    attachment.content.body.map((b) => b.text),
    ['Order A-17', 'say "hi", then } ] {{'],
  );
  assert.deepEqual(JSON.parse(second!.body).attachments[0].content, { type: 'AdaptiveCard', version: '1.5', body: [{ type: 'TextBlock', text: 'Ada' }] });
  assert.deepEqual(record.steps[0]!.output, { ok: true, status: 202 });
});

test("Teams: a 429's Retry-After feeds the retry policy; a refused signature fails with Teams' answer; a card that is not an object fails without a request", async () => {
  const busy = await run([node('card', 'teams', { credential: 'teams_busy', text: 'hi' }, { retry: { attempts: 2, on: ['429'] } })]);
  assert.equal(busy.record.status, 'succeeded', busy.record.error ?? '');
  assert.deepEqual(busy.sleeps, [3000]);
  const start = teams.received.length;
  const refused = await run([node('card', 'teams', { credential: 'teams_revoked', text: 'hi' })]);
  assert.match(refused.record.error!, /Teams answered HTTP 401: .*DirectApiAuthorizationRequired/);
  const notObject = await run([node('card', 'teams', { credential: 'teams_hook', card: '[1]' })]);
  assert.match(notObject.record.error!, /card must be a JSON object/);
  assert.equal(since(teams, start).length, 1, 'the refused one only');
});

test('the bot token and the webhook URLs never appear in the recorded run, a failed step’s included', async () => {
  const { record } = await run([
    node('post', 'slack', { credential: 'slack_bot', channel: 'C1', text: 'hi' }),
    node('hook', 'slack', { mode: 'webhook', credential: 'slack_hook', text: 'hi' }),
    node('msg', 'discord', { credential: 'discord_hook', content: 'hi' }),
    node('card', 'teams', { credential: 'teams_hook', text: 'hi' }),
    node('fail', 'slack', { credential: 'slack_bot', channel: 'C_MISSING', text: 'hi' }),
  ]);
  assert.equal(record.steps.length, 5);
  assert.equal(record.steps[4]!.status, 'failed');
  const recorded = JSON.stringify(record);
  for (const secret of ['SeCrEtToKeN', 'hOoKsEcReT', 'dIsCoRdSeCrEt', 'TeAmSsIgNaTuRe']) assert.ok(!recorded.includes(secret), `${secret} is not recorded`);
  assert.deepEqual(record.steps[0]!.input, { mode: 'bot', credential: 'slack_bot', message: { channel: 'C1', text: 'hi' } });
});

test('the SSRF guard refuses a webhook on a private address unless the allowlist opens it', async () => {
  const strict = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('')) });
  try {
    const start = discord.received.length;
    const { record } = await run([node('msg', 'discord', { credential: 'discord_hook', content: 'hi' })], { http: strict });
    assert.equal(record.status, 'failed');
    assert.match(record.error!, /refused/);
    assert.equal(since(discord, start).length, 0);
  } finally {
    await strict.close();
  }
});
