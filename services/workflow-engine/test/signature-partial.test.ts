// Verify signature compares the whole signature (docs/workflow-engine.md, "Verify signature"): a
// delivery whose signature is only part of the genuine one (cut short), the genuine one with bytes
// added, or with its last byte changed takes the false branch as a mismatch, for each preset's way of
// carrying it. Through executeWorkflow with the raw body as ingest publishes it.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { NodeParams, WorkflowGraph } from '@flowdesk/contracts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow } from '../src/domain/executor.ts';
import { fixedClock, fixedEvent, silentLog } from './support.ts';

const NOW_S = Date.parse('2025-03-01T10:00:00.000Z') / 1000;
const BODY = '{"order":42,"paid":true}';
const SECRET = 'a shared webhook secret';
const WHSEC = `whsec_${randomBytes(24).toString('base64')}`;

async function verify(params: NodeParams<'verify_signature'>, headers: Record<string, string>) {
  const graph = {
    nodes: [
      { id: 'verify', type: 'verify_signature', params },
      { id: 'genuine', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'yes' }] } },
      { id: 'forged', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'no' }] } },
    ],
    edges: [
      { from: 'trigger', to: 'verify' },
      { from: 'verify', to: 'genuine', branch: 'true' },
      { from: 'verify', to: 'forged', branch: 'false' },
    ],
  } as unknown as WorkflowGraph;
  const event = { ...fixedEvent(`evt_${randomBytes(6).toString('hex')}`, JSON.parse(BODY), headers), rawBody: Buffer.from(BODY).toString('base64') };
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: {
      http: { send: () => Promise.reject(new Error('no HTTP')) },
      createTask: () => Promise.reject(new Error('no tasks')),
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
      credentials: new Map([
        ['hook', SECRET],
        ['svix', WHSEC],
      ]),
    },
  });
  const ran = record.steps.filter((s) => s.status !== 'skipped').map((s) => s.nodeId);
  return {
    status: record.status,
    error: record.error,
    ran,
    output: record.steps.find((s) => s.nodeId === 'verify')?.output as { valid: boolean; reason?: string },
  };
}

/** The genuine digest, and what a forger might send instead: cut short, with bytes added, its last byte changed. */
function variants(digest: Buffer): [string, Buffer][] {
  const changed = Buffer.from(digest);
  changed[changed.length - 1]! ^= 0x01;
  return [
    ['the first half', digest.subarray(0, digest.length / 2)],
    ['all but the last byte', digest.subarray(0, digest.length - 1)],
    ['one byte added', Buffer.concat([digest, Buffer.from([0])])],
    ['the last byte changed', changed],
  ];
}

const github = createHmac('sha256', SECRET).update(BODY).digest();
const stripe = createHmac('sha256', SECRET).update(`${NOW_S}.${BODY}`).digest();
const standard = createHmac('sha256', Buffer.from(WHSEC.slice('whsec_'.length), 'base64'))
  .update(`msg_1.${NOW_S}.${BODY}`)
  .digest();

const presets: [string, NodeParams<'verify_signature'>, (d: Buffer) => Record<string, string>, Buffer][] = [
  ['GitHub', { preset: 'github', credential: 'hook' }, (d) => ({ 'x-hub-signature-256': `sha256=${d.toString('hex')}` }), github],
  ['Shopify', { preset: 'shopify', credential: 'hook' }, (d) => ({ 'x-shopify-hmac-sha256': d.toString('base64') }), github],
  ['Stripe', { preset: 'stripe', credential: 'hook' }, (d) => ({ 'stripe-signature': `t=${NOW_S},v1=${d.toString('hex')}` }), stripe],
  [
    'Standard Webhooks',
    { preset: 'standard_webhooks', credential: 'svix' },
    (d) => ({ 'webhook-id': 'msg_1', 'webhook-timestamp': String(NOW_S), 'webhook-signature': `v1,${d.toString('base64')}` }),
    standard,
  ],
];

for (const [name, params, headers, digest] of presets) {
  test(`${name}: a signature that is only part of the genuine one, or more, or one byte off, takes false as a mismatch`, async () => {
    const genuine = await verify(params, headers(digest));
    assert.equal(genuine.output.valid, true, `${name}: the genuine signature is accepted`);
    for (const [what, forged] of variants(digest)) {
      const r = await verify(params, headers(forged));
      assert.equal(r.status, 'succeeded', `${name}, ${what}: the run goes on (${r.error ?? ''})`);
      assert.deepEqual([r.output.valid, r.output.reason], [false, 'mismatch'], `${name}, ${what}`);
      assert.deepEqual(r.ran, ['verify', 'forged'], `${name}, ${what}: only the false branch runs`);
    }
  });
}

test('each refusal says why in the output (header, encoding, credential), and a signature padded with spaces is still read', async () => {
  const params: NodeParams<'verify_signature'> = { preset: 'github', credential: 'hook' };
  const messageOf = async (headers: Record<string, string>) => ((await verify(params, headers)).output as { message?: string }).message;
  assert.equal(await messageOf({}), 'no x-hub-signature-256 header');
  assert.equal(await messageOf({ 'x-hub-signature-256': github.toString('hex') }), 'x-hub-signature-256 does not start with "sha256="');
  assert.equal(await messageOf({ 'x-hub-signature-256': 'sha256=zz' }), 'x-hub-signature-256 is not a hex digest');
  assert.equal(
    await messageOf({ 'x-hub-signature-256': `sha256=${Buffer.alloc(32).toString('hex')}` }),
    'x-hub-signature-256 does not match the body signed with the credential "hook"',
  );
  const padded = await verify(params, { 'x-hub-signature-256': `  sha256=${github.toString('hex')}  ` });
  assert.equal(padded.output.valid, true);
});
