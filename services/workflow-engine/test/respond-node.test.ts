// The Respond node's checks, on its handler: statuses, refused headers, the body limit, first-wins.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { responseHeaderProblem, WEBHOOK_REPLY_MAX_BODY } from '@flowdesk/contracts';
import { respondHandler, type RespondInput } from '../src/domain/nodes/respond.ts';
import type { NodeContext } from '../src/domain/nodes/node-handler.ts';
import { fallbackAnswer, processTriggerEvent, type ProcessDeps } from '../src/domain/process-trigger.ts';
import type { RunWrite } from '../src/domain/ports.ts';

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
  const first = await respondHandler.execute(
    input({ status: 201, headers: { 'X-Order': 'A-1', 'Cache-Control': 'private, max-age=60', ETag: '"v1"', 'Retry-After': '5', 'X-Name': 'Zoë' } }),
    ctx,
  );
  assert.deepEqual(first.output, {
    status: 201,
    headers: { 'x-order': 'A-1', 'cache-control': 'private, max-age=60', etag: '"v1"', 'retry-after': '5', 'x-name': 'Zoë' },
    body: { ok: true },
    sent: true,
  });
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
  // An allow list, not a deny list: what a proxy or a browser acts on is refused on Flowdesk's origin.
  for (const [name, value] of [
    ['X-Accel-Redirect', '/internal/file'],
    ['X-Sendfile', '/etc/passwd'],
    ['Clear-Site-Data', '"*"'],
    ['Link', '</x.js>; rel=preload'],
    ['Content-Disposition', 'attachment; filename=a.html'],
    ['Vary', 'Cookie'],
    ['Cache-Control', 'public, max-age=86400'],
    ['Cache-Control', 'max-age=60'],
    ['X-Forwarded-Host', 'evil.example'],
    ['X-Request-Id', 'mine'],
  ] as const)
    await assert.rejects(respondHandler.execute(input({ headers: { [name]: value } }), ctx), /cannot be set|may only be private/, `${name}: ${value}`);
  // A value HTTP cannot carry fails the step with the reason (the caller then gets the fallback, never a raw 500).
  await assert.rejects(respondHandler.execute(input({ headers: { 'X-Name': 'Zoë 😀' } }), ctx), /outside Latin-1/);
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

/**
 * processTriggerEvent with a waiting caller, on in-memory ports: the run store keeps the writes,
 * `unstorable` has it refuse the claim as a data error once (the payload the database refused).
 */
async function answerOf(opts: { graphParams: unknown; active?: boolean; credentials?: ProcessDeps['credentials']; unstorable?: boolean }) {
  const workflow = {
    id: 'wf1',
    ownerId: 'owner1',
    version: 1,
    active: opts.active ?? true,
    triggerType: 'webhook',
    graph: { nodes: [{ id: 'set', type: 'set_fields', params: opts.graphParams }], edges: [{ from: 'trigger', to: 'set' }] },
  };
  const writes: RunWrite[] = [];
  const replies: { status: number; body: any }[] = [];
  let refuse = opts.unstorable ?? false;
  const unstorable = new Error('invalid byte sequence');
  const deps = {
    runs: {
      isUnstorable: (err: unknown) => err === unstorable,
      claim: async (w: RunWrite) => {
        if (refuse) {
          refuse = false;
          throw unstorable;
        }
        writes.push(w);
        return 'new' as const;
      },
      checkpoint: async () => {},
      checkpoints: async () => new Map(),
      keepCancelledSteps: async () => {},
      getByEvent: async () => ({ id: 'run-1' }),
    },
    definitions: { get: async () => workflow, refresh: async () => workflow },
    workspace: { createTask: async () => ({}) },
    samples: { keep: () => {} },
    http: {},
    clock: () => new Date(),
    log: { info: () => {}, warn: () => {}, error: () => {} },
    metrics: { runStarted: () => {}, runFinished: () => {} },
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    reply: async (r: { status: number; body: unknown }) => void replies.push(r),
  } as unknown as ProcessDeps;
  const event = {
    eventId: 'evt_1',
    workflowId: 'wf1',
    ownerId: 'owner1',
    source: 'webhook' as const,
    receivedAt: new Date().toISOString(),
    payload: {},
    headers: {},
    replyTo: { replica: 'ingest-0', mode: 'finished' as const },
  };
  await processTriggerEvent(event, deps);
  assert.equal(replies.length, 1, 'the caller is answered exactly once');
  return { reply: replies[0]!, writes };
}

test('a run failed without executing answers the waiting caller 500 {runId, status: failed}, never the store’s reason', async () => {
  const secretReason = 'unable to open sealed value with key k1 (sk_live_abc)';
  const creds = await answerOf({
    graphParams: { fields: [{ name: 'auth', value: '{{credentials.crm}}' }] },
    credentials: { resolve: async () => Promise.reject(new Error(secretReason)) },
  });
  assert.equal(creds.reply.status, 500);
  assert.equal(creds.reply.body.runId, 'run-1');
  assert.equal(creds.reply.body.status, 'failed');
  assert.match(creds.reply.body.error, /credentials could not be read; the run was not executed/);
  assert.doesNotMatch(JSON.stringify(creds.reply.body), /sk_live|k1/);
  // The run's page keeps the reason for its owner.
  assert.match(creds.writes.at(-1)!.error!, /unable to open sealed value/);

  // No credentials store configured: the same answer.
  const unconfigured = await answerOf({ graphParams: { fields: [{ name: 'auth', value: '{{credentials.crm}}' }] } });
  assert.equal(unconfigured.reply.status, 500);

  const unstorable = await answerOf({ graphParams: { fields: [{ name: 'x', value: '1' }] }, unstorable: true });
  assert.equal(unstorable.reply.status, 500);
  assert.equal(unstorable.reply.body.runId, 'run-1');
  assert.match(unstorable.reply.body.error, /payload could not be stored/);
});

test('a run skipped because the workflow was deactivated meanwhile answers 200 {status: skipped} with the reason', async () => {
  const { reply } = await answerOf({ graphParams: { fields: [{ name: 'x', value: '1' }] }, active: false });
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, { runId: 'run-1', status: 'skipped', output: null, error: 'The workflow was deactivated before this event was processed' });
});

test('the header allow list: its five names and custom X-* names pass; a bare X-, a non-text value, a shared-cache Cache-Control do not', () => {
  for (const [name, value] of [
    ['Content-Language', 'de-CH'],
    ['Last-Modified', 'Tue, 01 Dec 2026 10:00:00 GMT'],
    ['ETag', '"v2"'],
    ['Retry-After', '120'],
    ['X-Trace', 'abc'],
    ['Cache-Control', 'no-store'],
    ['Cache-Control', 'no-cache'],
    ['Cache-Control', 'No-Store, Max-Age=0'],
    ['Cache-Control', 'private,must-revalidate'],
  ] as const)
    assert.equal(responseHeaderProblem(name, value), null, `${name}: ${value}`);
  assert.equal(
    responseHeaderProblem('Link', '</x.js>; rel=preload'),
    'header "link" cannot be set by a workflow (allowed: cache-control, content-language, etag, last-modified, retry-after and custom X-* names; docs/webhooks.md)',
  );
  assert.equal(
    responseHeaderProblem('X-', 'a'),
    'header "x-" cannot be set by a workflow (allowed: cache-control, content-language, etag, last-modified, retry-after and custom X-* names; docs/webhooks.md)',
  );
  assert.equal(responseHeaderProblem('X-Bad Name', 'a'), 'header name "X-Bad Name" is not a valid HTTP header name');
  assert.equal(responseHeaderProblem(`X-${'n'.repeat(150)}`, 'a'), `header name "X-${'n'.repeat(98)}" is not a valid HTTP header name`, 'the name cut to 100');
  assert.match(responseHeaderProblem('Not-X-', 'a') ?? '', /cannot be set/, 'x- must be the prefix');
  assert.equal(responseHeaderProblem('X-Count', 5 as unknown as string), 'header "x-count" has a value that is not text');
  assert.equal(responseHeaderProblem('X-A', 'a\0b'), 'header "x-a" has a line break or NUL in its value');
  for (const value of ['private, public', 'must-revalidate', 'private, s-maxage=60'])
    assert.match(responseHeaderProblem('Cache-Control', value) ?? '', /^header "cache-control" may only be private or non-storing/, value);
  assert.ok(responseHeaderProblem('Cache-Control', `public, ${'x'.repeat(200)}`)?.endsWith(`not "public, ${'x'.repeat(92)}"`), 'the value cut to 100');
});
