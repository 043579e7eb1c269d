/**
 * Telegram node (docs/workflow-engine.md, "Telegram") against a stand-in for Telegram's Bot API on
 * loopback that checks sendMessage's request as https://core.telegram.org/bots/api documents it
 * (POST /bot<token>/sendMessage, Content-Type: application/json, chat_id and text, parse_mode
 * MarkdownV2 or HTML, disable_notification a boolean, reply_parameters.message_id an integer, no
 * field it does not know) and answers as the Bot API does: `{ ok: true, result: Message }`, and
 * `{ ok: false, error_code, description, parameters? }` with the error code as the HTTP status
 * (401 Unauthorized, 400 Bad Request: chat not found, 429 with parameters.retry_after). Runs go
 * through the executor with the guarded HTTP client and its retry policy; the token never appears in
 * what a run records and never goes to another origin.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkflowNode } from '@flowdesk/contracts';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import type { RunOptions } from '../src/domain/executor.ts';
import type { CredentialValue, HttpClient } from '../src/domain/ports.ts';
import { fixedEvent, json, startServer, type TestServer, runChain } from './support.ts';

const TOKEN = '7012345678:AAF-SeCrEtToKeN_abcdefghijklmnop';
const MOVED_TOKEN = '7099999999:AAredirectredirectredirect';
const KNOWN_FIELDS = new Set(['chat_id', 'text', 'parse_mode', 'disable_notification', 'reply_parameters']);

let telegram: TestServer;
let elsewhere: TestServer;
let http: GuardedHttpClient;
let options: RunOptions;
let messageId = 100;

const refuse = (res: Parameters<typeof json>[0], code: number, description: string, parameters?: Record<string, unknown>) =>
  json(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });

before(async () => {
  elsewhere = await startServer((_req, res) => json(res, 200, { ok: true, result: {} }));
  telegram = await startServer((req, res) => {
    const path = /^\/bot([^/]+)\/sendMessage$/.exec(req.url);
    if (!path) return refuse(res, 404, 'Not Found');
    if (path[1] === MOVED_TOKEN) return void res.writeHead(307, { location: `${elsewhere.url}${req.url}` }).end();
    if (path[1] !== TOKEN) return refuse(res, 401, 'Unauthorized');
    if (req.method !== 'POST') return refuse(res, 400, `Bad Request: method ${req.method}`);
    if (!/^application\/json\b/.test(String(req.headers['content-type']))) return refuse(res, 400, 'Bad Request: message text is empty');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, 'Bad Request: invalid JSON');
    }
    const unknown = Object.keys(body).filter((k) => !KNOWN_FIELDS.has(k));
    if (unknown.length) return refuse(res, 400, `Bad Request: unexpected ${unknown.join(', ')}`);
    if (typeof body.chat_id !== 'string' && typeof body.chat_id !== 'number') return refuse(res, 400, 'Bad Request: chat_id is empty');
    if (typeof body.text !== 'string' || !body.text) return refuse(res, 400, 'Bad Request: message text is empty');
    if (body.parse_mode !== undefined && body.parse_mode !== 'MarkdownV2' && body.parse_mode !== 'HTML')
      return refuse(res, 400, `Bad Request: unsupported parse_mode ${JSON.stringify(body.parse_mode)}`);
    if (body.parse_mode === 'MarkdownV2' && /(?<!\\)[.!]/.test(body.text))
      return refuse(res, 400, "Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'");
    if (body.disable_notification !== undefined && typeof body.disable_notification !== 'boolean')
      return refuse(res, 400, 'Bad Request: disable_notification is not a boolean');
    const reply = body.reply_parameters as { message_id?: unknown } | undefined;
    if (reply !== undefined && !Number.isInteger(reply.message_id)) return refuse(res, 400, 'Bad Request: invalid reply parameters');
    if (reply?.message_id === 999) return refuse(res, 400, 'Bad Request: message to be replied not found');
    const chat = String(body.chat_id);
    if (chat === '-100404') return refuse(res, 400, 'Bad Request: chat not found');
    if (chat === '-42') return refuse(res, 400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1001234567890 });
    if (chat === '-100500') return json(res, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
    if (chat === '-100429' && telegram.received.filter((r) => r.body.includes('-100429')).length === 1)
      return refuse(res, 429, 'Too Many Requests: retry after 3', { retry_after: 3 });
    json(res, 200, {
      ok: true,
      result: {
        message_id: ++messageId,
        from: { id: 7012345678, is_bot: true, first_name: 'Flowdesk', username: 'flowdesk_bot' },
        chat: chat.startsWith('@') ? { id: -1009876543210, title: 'Alerts', username: chat.slice(1), type: 'channel' } : { id: Number(chat), type: 'group' },
        date: 1_740_823_200,
        text: body.text,
        ...(reply ? { reply_to_message: { message_id: reply.message_id } } : {}),
      },
    });
  });
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
  options = { telegramNode: { apiUrl: `${telegram.url}/` } };
});
after(async () => {
  await http.close();
  await telegram.close();
  await elsewhere.close();
});

const credentials = (): Map<string, CredentialValue> =>
  new Map<string, CredentialValue>([
    ['tg', { type: 'telegram_bot', fields: { token: TOKEN } }],
    ['tg_revoked', { type: 'telegram_bot', fields: { token: '7012345678:AArevokedrevokedrevoked' } }],
    ['tg_moved', { type: 'telegram_bot', fields: { token: MOVED_TOKEN } }],
    ['slack_bot', { type: 'slack_bot', fields: { token: 'xoxb-1-2-x' } }],
  ]);

let seq = 0;
async function run(nodes: WorkflowNode[], extra: { http?: HttpClient; options?: RunOptions } = {}) {
  const ev = fixedEvent(`evt-tg-${++seq}`, { order: { id: 'A-17', note: '<b>say "hi"</b>' }, chat: '-1001111', replyTo: '57' });
  return runChain(nodes, ev, { http: extra.http ?? http, credentials: credentials() }, extra.options ?? options);
}

const node = (id: string, params: Record<string, unknown>, more: Partial<WorkflowNode> = {}): WorkflowNode =>
  ({ id, type: 'telegram', params, ...more }) as WorkflowNode;
const since = (n: number) => telegram.received.slice(n);

test('sendMessage: POST /bot<token>/sendMessage with JSON chat_id, text, parse_mode, disable_notification, reply_parameters; output is the Message', async () => {
  const start = telegram.received.length;
  const { record } = await run([
    node('tg_1', {
      credential: 'tg',
      chatId: ' {{trigger.chat}} ',
      text: 'Order {{trigger.order.id}}: {{trigger.order.note}}',
      parseMode: 'HTML',
      disableNotification: true,
      replyToMessageId: '{{trigger.replyTo}}',
    }),
    node('tg_2', { credential: 'tg', chatId: '@alerts_channel', text: 'plain {{nodes.tg_1.message_id}}' }),
  ]);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const [first, second, ...more] = since(start);
  assert.equal(more.length, 0);
  assert.equal(first!.method, 'POST');
  assert.equal(first!.url, `/bot${TOKEN}/sendMessage`);
  assert.equal(first!.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(first!.headers.authorization, undefined);
  assert.deepEqual(JSON.parse(first!.body), {
    chat_id: '-1001111',
    text: 'Order A-17: <b>say "hi"</b>',
    parse_mode: 'HTML',
    disable_notification: true,
    reply_parameters: { message_id: 57 },
  });
  // Plain text sends no parse_mode (and nothing it was not asked for).
  assert.deepEqual(JSON.parse(second!.body), { chat_id: '@alerts_channel', text: `plain ${messageId - 1}` });
  const output = record.steps[0]!.output as { message_id: number; chat: { id: number }; reply_to_message: { message_id: number } };
  assert.equal(output.message_id, messageId - 1);
  assert.equal(output.chat.id, -1001111);
  assert.equal(output.reply_to_message.message_id, 57);
  assert.equal((record.steps[1]!.output as { chat: { type: string } }).chat.type, 'channel');
});

test("Telegram's ok: false fails the step with its description and error code, recorded with the answer; a moved group names its new chat id", async () => {
  const notFound = await run([node('tg_1', { credential: 'tg', chatId: '-100404', text: 'hi' })]);
  assert.equal(notFound.record.status, 'failed');
  assert.equal(notFound.record.error, 'node "tg_1" failed: Telegram refused the message: Bad Request: chat not found (error 400)');
  assert.deepEqual(notFound.record.steps[0]!.output, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });

  const md = await run([node('tg_1', { credential: 'tg', chatId: '-1001111', text: 'Done.', parseMode: 'MarkdownV2' })]);
  assert.match(md.record.error!, /Telegram refused the message: Bad Request: can't parse entities: Character '\.' is reserved/);

  const moved = await run([node('tg_1', { credential: 'tg', chatId: '-42', text: 'hi' })]);
  assert.match(moved.record.error!, /group chat was upgraded to a supergroup chat \(error 400\) \(the group is now the supergroup -1001234567890/);

  const revoked = await run([node('tg_1', { credential: 'tg_revoked', chatId: '-1001111', text: 'hi' })]);
  assert.equal(revoked.record.error, 'node "tg_1" failed: Telegram refused the message: Unauthorized (error 401)');
});

test('a 429 with parameters.retry_after feeds the retry policy (it waits that long, then sends again); other errors and 5xx are never repeated', async () => {
  const start = telegram.received.length;
  const busy = await run([node('tg_1', { credential: 'tg', chatId: '-100429', text: 'hi' }, { retry: { attempts: 3, on: ['429', '5xx'] } })]);
  assert.equal(busy.record.status, 'succeeded', busy.record.error ?? '');
  assert.deepEqual(busy.sleeps, [3000], 'parameters.retry_after: 3 (seconds)');
  assert.equal(busy.record.steps[0]!.attempts, 2);
  assert.match(busy.record.steps[0]!.attemptErrors![0]!, /Too Many Requests: retry after 3 \(error 429\)/);
  assert.equal(since(start).length, 2);

  for (const chatId of ['-100500', '-100404']) {
    const mid = telegram.received.length;
    const failed = await run([node('tg_1', { credential: 'tg', chatId, text: 'hi' }, { retry: { attempts: 3, on: ['any'] } })]);
    assert.equal(failed.record.status, 'failed');
    assert.equal(since(mid).length, 1, `${chatId}: sent once`);
    assert.deepEqual(failed.sleeps, []);
  }
});

test('a wrong credential type, an empty or malformed chat id, empty or too long text and a reply id that is not a number fail the step without a request', async () => {
  const start = telegram.received.length;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ credential: 'slack_bot', chatId: '1', text: 'x' }, /credential "slack_bot" is of type slack_bot; this node takes a credential of type telegram_bot/],
    [{ credential: 'nope', chatId: '1', text: 'x' }, /unknown credential "nope"/],
    [{ credential: 'tg', chatId: '{{trigger.missing}}', text: 'x' }, /chat id is empty/],
    [{ credential: 'tg', chatId: 'general', text: 'x' }, /chat id "general" is neither a number nor @channelusername/],
    [{ credential: 'tg', chatId: '1', text: '{{trigger.missing}}' }, /text is empty/],
    [{ credential: 'tg', chatId: '1', text: '{{trigger.long}}' }, /text is longer than Telegram's 4096 characters/],
    [{ credential: 'tg', chatId: '1', text: 'x', replyToMessageId: 'abc' }, /reply to message id "abc" is not a message id/],
  ];
  for (const [params, error] of cases) {
    const nodes = [{ id: 'long', type: 'set_fields', params: { fields: [{ name: 'long', value: 'y'.repeat(4097) }] } } as WorkflowNode];
    const text = String(params.text).replace('trigger.long', 'nodes.long.long');
    const { record } = await run([...nodes, node('tg_1', { ...params, text })]);
    assert.equal(record.status, 'failed', JSON.stringify(params));
    assert.match(record.error!, error);
  }
  assert.equal(since(start).length, 0);
});

test('the token is never recorded, a failed step’s included, and never follows a redirect to another origin', async () => {
  const { record } = await run([
    node('tg_1', { credential: 'tg', chatId: '1', text: 'hi' }),
    node('tg_2', { credential: 'tg', chatId: '-100404', text: 'hi' }),
  ]);
  assert.equal(record.steps[1]!.status, 'failed');
  const recorded = JSON.stringify(record);
  assert.ok(!recorded.includes('SeCrEtToKeN'), 'the token is not recorded');
  assert.deepEqual(record.steps[0]!.input, { credential: 'tg', message: { chat_id: '1', text: 'hi' } });

  const moved = await run([node('tg_1', { credential: 'tg_moved', chatId: '1', text: 'hi' })]);
  assert.equal(moved.record.status, 'failed');
  assert.match(moved.record.error!, /redirect 307 .* to another origin .* not followed: the request carries a credential in the URL/);
  assert.equal(elsewhere.received.length, 0);
  assert.ok(!JSON.stringify(moved.record).includes('redirectredirect'));
});

test("without a test's base URL the node sends to https://api.telegram.org/bot<token>/sendMessage, and the SSRF guard screens it", async () => {
  const sent: string[] = [];
  const capture: HttpClient = {
    send: async (req) => {
      sent.push(req.url);
      const body = new TextEncoder().encode('{"ok":true,"result":{"message_id":1}}');
      return { status: 200, headers: { 'content-type': 'application/json' }, body, truncated: false, url: req.url };
    },
  };
  const { record } = await run([node('tg_1', { credential: 'tg', chatId: '1', text: 'hi' })], { http: capture, options: {} });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(sent, [`https://api.telegram.org/bot${TOKEN}/sendMessage`]);

  const strict = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('')) });
  try {
    const start = telegram.received.length;
    const refused = await run([node('tg_1', { credential: 'tg', chatId: '1', text: 'hi' })], { http: strict });
    assert.match(refused.record.error!, /refused/);
    assert.equal(since(start).length, 0);
  } finally {
    await strict.close();
  }
});
