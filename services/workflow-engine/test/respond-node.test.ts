// The Respond node's checks, on its handler: statuses, refused headers, the body limit, first-wins.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WEBHOOK_REPLY_MAX_BODY } from '@flowdesk/contracts';
import { respondHandler, type RespondInput } from '../src/domain/nodes/respond.ts';
import type { NodeContext } from '../src/domain/nodes/node-handler.ts';
import { fallbackAnswer } from '../src/domain/process-trigger.ts';

function context(respond?: NodeContext['respond']) {
  const warnings: string[] = [];
  const ctx = {
    ports: {} as NodeContext['ports'],
    ownerId: 'o',
    signal: new AbortController().signal,
    warn: (m: string) => warnings.push(m),
    ...(respond ? { respond } : {}),
  };
  return { ctx, warnings };
}
const input = (over: Partial<RespondInput> = {}): RespondInput => ({ status: 200, headers: {}, body: { ok: true }, ...over });

test('the first Respond answers; a later one is not sent and warns', async () => {
  const sent: unknown[] = [];
  let answered = false;
  const { ctx, warnings } = context(async (a) => {
    if (answered) return 'earlier';
    answered = true;
    sent.push(a);
    return 'sent';
  });
  const first = await respondHandler.execute(input({ status: 201, headers: { 'X-Order': 'A-1' } }), ctx);
  assert.deepEqual(first.output, { status: 201, headers: { 'x-order': 'A-1' }, body: { ok: true }, sent: true });
  const second = await respondHandler.execute(input({ status: 500 }), ctx);
  assert.equal((second.output as { sent: boolean }).sent, false);
  assert.equal(sent.length, 1);
  assert.match(warnings[0]!, /answered the caller earlier/);
});

test('nobody waits (a manual run): recorded, not sent, with a warning', async () => {
  const { ctx, warnings } = context();
  const out = await respondHandler.execute(input(), ctx);
  assert.equal((out.output as { sent: boolean }).sent, false);
  assert.match(warnings[0]!, /nobody waits/);
});

test('refused: hop-by-hop, framing and security-sensitive headers, bad names and values, 1xx, a body above the limit', async () => {
  const { ctx } = context(async () => 'sent');
  for (const name of [
    'Connection',
    'transfer-encoding',
    'Set-Cookie',
    'Location',
    'Access-Control-Allow-Origin',
    'Content-Type',
    'Strict-Transport-Security',
    'Proxy-Foo',
    'bad name',
  ])
    await assert.rejects(respondHandler.execute(input({ headers: { [name]: 'x' } }), ctx), /cannot be set|not a valid/, name);
  await assert.rejects(respondHandler.execute(input({ headers: { 'X-A': 'a\r\nSet-Cookie: x' } }), ctx), /line break/);
  await assert.rejects(respondHandler.execute(input({ status: 101 }), ctx), /informational/);
  await assert.rejects(respondHandler.execute(input({ status: 600 }), ctx), /not an HTTP status/);
  await assert.rejects(respondHandler.execute(input({ body: 'x'.repeat(WEBHOOK_REPLY_MAX_BODY) }), ctx), /above the limit/);
});

test('the fallback: 200 with the last output, 500 with the error, 202 for an event that did not run', () => {
  const step = (status: string, output: unknown) =>
    ({ nodeId: 'n', type: 'set_fields', status, input: null, output, error: null, startedAt: '', durationMs: 0 }) as never;
  assert.deepEqual(fallbackAnswer('e', 'r', 'ran', { status: 'succeeded', steps: [step('succeeded', { a: 1 }), step('skipped', null)], error: null }), {
    status: 200,
    headers: {},
    body: { runId: 'r', status: 'succeeded', output: { a: 1 } },
  });
  assert.equal(fallbackAnswer('e', 'r', 'ran', { status: 'failed', steps: [], error: 'boom' }).status, 500);
  assert.deepEqual(fallbackAnswer('e', null, 'duplicate', undefined), {
    status: 202,
    headers: {},
    body: { accepted: true, eventId: 'e', runId: null, status: 'duplicate' },
  });
});
