// MCP 2025-11-25 SSE polling (SEP-1699; docs/mcp-gateway.md, "SSE polling"): an SSE answer of a
// 2025-11-25 session opens with a priming event (an id, empty data, `retry`); its events are stored,
// so a client whose stream closed before the answer reconnects with GET and Last-Event-ID — on any
// replica — and gets the answer. Another session cannot replay it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MCP_PATH, initializeBody, rawMcp, startStack, type Stack, type TestUser } from './helpers/stack.ts';

let stack: Stack;
let user: TestUser;
before(async () => {
  stack = await startStack();
  user = await stack.newUser();
});
after(async () => {
  await stack?.close();
});

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** Parses an SSE body into its events (a `retry`-only block counts as an event without data). */
function events(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const e: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') e.id = value;
        else if (field === 'retry') e.retry = Number(value);
        else if (field === 'data') e.data += value;
      }
      return e;
    });
}

async function session(url: string, version: string): Promise<string> {
  const init = await rawMcp(url, initializeBody(version), { authorization: `Bearer ${user.readKey}` });
  assert.equal(init.status, 200, init.text);
  const id = init.headers.get('mcp-session-id')!;
  const ready = await rawMcp(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders(id, version));
  assert.equal(ready.status, 202);
  return id;
}
const sessionHeaders = (id: string, version: string) => ({ authorization: `Bearer ${user.readKey}`, 'mcp-session-id': id, 'mcp-protocol-version': version });
const listProjects = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });
const preferSse = { accept: 'text/event-stream, application/json' };

async function resume(url: string, id: string, version: string, lastEventId: string) {
  const res = await fetch(`${url}${MCP_PATH}`, { headers: { ...sessionHeaders(id, version), accept: 'text/event-stream', 'last-event-id': lastEventId } });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

test('an SSE answer of a 2025-11-25 session opens with a priming event (id, empty data, retry) and its events carry ids', async () => {
  const id = await session(stack.gatewayUrl, '2025-11-25');
  const res = await rawMcp(stack.gatewayUrl, listProjects(2), { ...sessionHeaders(id, '2025-11-25'), ...preferSse });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const [priming, answer, ...rest] = events(res.text);
  assert.equal(rest.length, 0);
  assert.match(priming!.id ?? '', /^[0-9a-f-]{36}_\d+$/);
  assert.equal(priming!.data, '');
  assert.equal(priming!.retry, 1000);
  assert.match(answer!.id ?? '', /^[0-9a-f-]{36}_\d+$/);
  assert.equal(JSON.parse(answer!.data).id, 2);
  // Replayed from the store after the priming event: the same answer, on another replica too.
  const other = await stack.addGateway();
  const again = await resume(other, id, '2025-11-25', priming!.id!);
  assert.equal(again.status, 200);
  assert.match(again.type ?? '', /^text\/event-stream/);
  const replayed = events(again.text).filter((e) => e.data);
  assert.deepEqual(
    replayed.map((e) => e.id),
    [answer!.id],
  );
  assert.deepEqual(JSON.parse(replayed[0]!.data), JSON.parse(answer!.data));
});

test('a long call becomes polling: its stream closes after the priming event, and the answer comes on the reconnection to another replica', async () => {
  // This replica closes every SSE answer at once (the production default is 25 s).
  const polling = await stack.addGateway({ ssePollAfterMs: 0 });
  const id = await session(polling, '2025-11-25');
  const res = await rawMcp(polling, listProjects(7), { ...sessionHeaders(id, '2025-11-25'), ...preferSse });
  assert.equal(res.status, 200, res.text);
  const streamed = events(res.text);
  assert.equal(streamed.length, 1, `only the priming event before the stream closed: ${res.text}`);
  const lastEventId = streamed[0]!.id!;
  const got = await resume(stack.gatewayUrl, id, '2025-11-25', lastEventId);
  assert.equal(got.status, 200, `${got.status} ${got.type} ${JSON.stringify(got.text)}`);
  const answer = events(got.text).find((e) => e.data);
  assert.ok(answer, got.text);
  const message = JSON.parse(answer.data) as { id: number; result: { structuredContent: { items: unknown[] } } };
  assert.equal(message.id, 7);
  assert.ok(Array.isArray(message.result.structuredContent.items));
});

test('another session cannot replay a stream, a malformed Last-Event-ID is 400, and GET without one stays 405', async () => {
  const mine = await session(stack.gatewayUrl, '2025-11-25');
  const res = await rawMcp(stack.gatewayUrl, listProjects(3), { ...sessionHeaders(mine, '2025-11-25'), ...preferSse });
  const priming = events(res.text)[0]!.id!;
  const theirs = await session(stack.gatewayUrl, '2025-11-25');
  const stolen = await resume(stack.gatewayUrl, theirs, '2025-11-25', priming);
  assert.equal(stolen.status, 400);
  assert.match(stolen.text, /names no stream of this session/);
  assert.equal((await resume(stack.gatewayUrl, mine, '2025-11-25', 'not-an-id')).status, 400);
  const noId = await fetch(`${stack.gatewayUrl}${MCP_PATH}`, { headers: { ...sessionHeaders(mine, '2025-11-25'), accept: 'text/event-stream' } });
  assert.equal(noId.status, 405);
  // Without a token: the OAuth challenge, as before.
  const anonymous = await fetch(`${stack.gatewayUrl}${MCP_PATH}`, { headers: { accept: 'text/event-stream', 'last-event-id': priming } });
  assert.equal(anonymous.status, 401);
});

test('a 2025-06-18 session gets SSE answers without priming events (older clients cannot read empty data)', async () => {
  const id = await session(stack.gatewayUrl, '2025-06-18');
  const res = await rawMcp(stack.gatewayUrl, listProjects(4), { ...sessionHeaders(id, '2025-06-18'), ...preferSse });
  const list = events(res.text);
  assert.equal(list.length, 1);
  assert.equal(list[0]!.id, undefined);
  assert.equal(JSON.parse(list[0]!.data).id, 4);
});
