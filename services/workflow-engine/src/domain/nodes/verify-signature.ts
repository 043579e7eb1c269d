/**
 * Verify signature node (docs/workflow-engine.md, "Verify signature"): the provider's HMAC of the
 * webhook's raw body (kept by ingest for workflows with this node, docs/webhooks.md "Raw body"), keyed
 * with a secret from Credentials, compared in constant time with what the provider's header says.
 * A genuine delivery takes `true`; anything else takes `false` with a reason that never holds the
 * secret or the expected signature. The step records the preset, header and outcome, not the body.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SIGNATURE_DEFAULT_TOLERANCE_SECONDS, type NodeParams, type SignaturePreset } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import type { DeliveryLedger } from '../ports.ts';
import type { NodeHandler } from './node-handler.ts';

export type VerifySignatureParams = NodeParams<'verify_signature'>;

export type SignatureFailure = 'no_raw_body' | 'missing_header' | 'bad_format' | 'timestamp_out_of_tolerance' | 'mismatch';

export interface VerifySignatureInput {
  preset: SignaturePreset;
  credential: string;
  /** Lower-cased header(s) the preset reads. */
  header: string;
  algorithm: 'sha256' | 'sha1';
  encoding: 'hex' | 'base64';
  prefix: string;
  toleranceSeconds: number;
  /** Refuse a delivery id this workflow accepted within the window (refuseReplays; default on but for custom). */
  refuseReplays: boolean;
  /** Not recorded: the secret, the request's headers and raw body. */
  secret: string;
  headers: Readonly<Record<string, string>>;
  rawBody?: Buffer;
}

export type Verdict = { valid: true } | { valid: false; reason: SignatureFailure; detail: string };

const PRESET_HEADER: Record<Exclude<SignaturePreset, 'custom'>, string> = {
  github: 'x-hub-signature-256',
  stripe: 'stripe-signature',
  shopify: 'x-shopify-hmac-sha256',
  standard_webhooks: 'webhook-signature',
};

export const verifySignatureHandler: NodeHandler<VerifySignatureParams, VerifySignatureInput> = {
  isAction: false,
  render: (params, renderer) => renderVerifySignature(params, renderer),
  mask: ({ secret: _s, headers: _h, rawBody, ...input }) => ({ ...input, rawBodyBytes: rawBody?.length ?? null }),
  execute: async (input, ctx) => {
    const now = ctx.ports.clock();
    const verdict = verifySignature(input, now.getTime());
    if (verdict.valid) {
      if (input.refuseReplays) {
        if (ctx.ports.deliveries && ctx.workflowId) await refuseReplay(input, ctx.workflowId, now, ctx.ports.deliveries);
        else ctx.warn('delivery ids are not kept here (a step test): a repeated delivery would not be refused');
      }
      return { output: { valid: true, preset: input.preset }, branch: 'true' };
    }
    return { output: { valid: false, preset: input.preset, reason: verdict.reason, message: verdict.detail }, branch: 'false' };
  },
};

export function renderVerifySignature(params: VerifySignatureParams, renderer: TemplateRenderer): VerifySignatureInput {
  const request = renderer.request();
  return {
    preset: params.preset,
    credential: params.credential,
    header: params.preset === 'custom' ? (params.header ?? '').toLowerCase() : PRESET_HEADER[params.preset],
    algorithm: params.preset === 'custom' ? (params.algorithm ?? 'sha256') : 'sha256',
    encoding: params.preset === 'custom' ? (params.encoding ?? 'hex') : params.preset === 'github' || params.preset === 'stripe' ? 'hex' : 'base64',
    prefix: params.preset === 'custom' ? (params.prefix ?? '') : params.preset === 'github' ? 'sha256=' : '',
    toleranceSeconds: params.toleranceSeconds ?? SIGNATURE_DEFAULT_TOLERANCE_SECONDS,
    refuseReplays: params.refuseReplays ?? params.preset !== 'custom',
    // An unknown credential fails the node (as {{credentials.x}} does): no secret, nothing to verify.
    secret: renderer.credential(params.credential),
    headers: request.headers,
    ...(request.rawBody ? { rawBody: request.rawBody } : {}),
  };
}

/**
 * The delivery's id, as its provider names it (`<preset>:<id>`): Standard Webhooks' `webhook-id`,
 * the Stripe event's `id` (the body's; a Stripe retry of one event has a new signature, the same id),
 * GitHub's `X-GitHub-Delivery`, Shopify's `X-Shopify-Webhook-Id`. Without one (custom, or the
 * provider's id missing): the signature itself, which a replayed request repeats.
 */
export function deliveryIdOf(input: VerifySignatureInput): string {
  const h = input.headers;
  let id: string | undefined;
  if (input.preset === 'standard_webhooks') id = h['webhook-id'];
  else if (input.preset === 'github') id = h['x-github-delivery'];
  else if (input.preset === 'shopify') id = h['x-shopify-webhook-id'];
  else if (input.preset === 'stripe') id = stripeEventId(input.rawBody);
  if (!id) id = `sig:${h[input.header] ?? ''}`;
  return `${input.preset}:${id}`.slice(0, 300);
}

function stripeEventId(body: Buffer | undefined): string | undefined {
  try {
    const id = (JSON.parse(body?.toString('utf8') ?? 'null') as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A genuine delivery seen by this workflow within the window fails the step (a replay), else is recorded for the window. */
async function refuseReplay(input: VerifySignatureInput, workflowId: string, now: Date, ledger: DeliveryLedger): Promise<void> {
  const id = deliveryIdOf(input);
  const until = new Date(now.getTime() + input.toleranceSeconds * 1000);
  if (!(await ledger.claim(workflowId, id, now, until)))
    throw new NodeFailedError(
      `repeated delivery refused: ${id.slice(0, 120)} was already accepted by this workflow within the last ${input.toleranceSeconds} s`,
    );
}

const fail = (reason: SignatureFailure, detail: string): Verdict => ({ valid: false, reason, detail });

/** The verdict for one delivery; `nowMs` for the timestamp presets. Pure, so tests call it directly too. */
export function verifySignature(input: VerifySignatureInput, nowMs: number): Verdict {
  const body = input.rawBody;
  if (!body) return fail('no_raw_body', 'the trigger carries no raw body (only webhook deliveries do; a manual run or a replayed sample has none)');
  switch (input.preset) {
    case 'stripe':
      return verifyStripe(input, body, nowMs);
    case 'standard_webhooks':
      return verifyStandardWebhooks(input, body, nowMs);
    default:
      return verifyPlain(input, body);
  }
}

/** GitHub, Shopify, custom: one digest of the body in one header, with an optional prefix. */
function verifyPlain(input: VerifySignatureInput, body: Buffer): Verdict {
  const value = input.headers[input.header]?.trim();
  if (!value) return fail('missing_header', `no ${input.header} header`);
  if (input.prefix && !value.startsWith(input.prefix)) return fail('bad_format', `${input.header} does not start with "${input.prefix}"`);
  const given = decode(value.slice(input.prefix.length), input.encoding);
  if (!given) return fail('bad_format', `${input.header} is not a ${input.encoding} digest`);
  const expected = createHmac(input.algorithm, input.secret).update(body).digest();
  return equal(given, expected)
    ? { valid: true }
    : fail('mismatch', `${input.header} does not match the body signed with the credential "${input.credential}"`);
}

/** Stripe: `t=<unix>,v1=<hex>[,v1=…]`, HMAC-SHA256 of `<t>.<body>`; any v1 may match (secret rotation). */
function verifyStripe(input: VerifySignatureInput, body: Buffer, nowMs: number): Verdict {
  const value = input.headers['stripe-signature'];
  if (!value) return fail('missing_header', 'no stripe-signature header');
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (key === 't') timestamp = v;
    else if (key === 'v1') {
      const d = decode(v, 'hex');
      if (d) signatures.push(d);
    }
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0)
    return fail('bad_format', 'stripe-signature has no t= timestamp or no v1= signature');
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > input.toleranceSeconds) {
    return fail('timestamp_out_of_tolerance', `the signed timestamp is more than ${input.toleranceSeconds} s from now`);
  }
  const expected = createHmac('sha256', input.secret).update(`${timestamp}.`).update(body).digest();
  return signatures.some((s) => equal(s, expected))
    ? { valid: true }
    : fail('mismatch', `no v1 signature matches the body signed with the credential "${input.credential}"`);
}

/** Standard Webhooks: `v1,<base64>` (space-separated, several during a rotation) over `<id>.<timestamp>.<body>`, key = the bytes after `whsec_`. */
function verifyStandardWebhooks(input: VerifySignatureInput, body: Buffer, nowMs: number): Verdict {
  const id = input.headers['webhook-id'];
  const timestamp = input.headers['webhook-timestamp'];
  const value = input.headers['webhook-signature'];
  if (!id || !timestamp || !value) return fail('missing_header', 'no webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d{1,12}$/.test(timestamp)) return fail('bad_format', 'webhook-timestamp is not a Unix time in seconds');
  const signatures = value
    .split(' ')
    .map((part) => part.split(',', 2))
    .filter(([version, v]) => version === 'v1' && v)
    .map(([, v]) => decode(v!, 'base64'))
    .filter((d): d is Buffer => d !== null);
  if (signatures.length === 0) return fail('bad_format', 'webhook-signature has no v1,<base64> signature');
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > input.toleranceSeconds) {
    return fail('timestamp_out_of_tolerance', `webhook-timestamp is more than ${input.toleranceSeconds} s from now`);
  }
  const key = Buffer.from(input.secret.trim().replace(/^whsec_/, ''), 'base64');
  if (key.length === 0) return fail('mismatch', `the credential "${input.credential}" is not a whsec_<base64> secret`);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  return signatures.some((s) => equal(s, expected))
    ? { valid: true }
    : fail('mismatch', `no v1 signature matches the body signed with the credential "${input.credential}"`);
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function decode(text: string, encoding: 'hex' | 'base64'): Buffer | null {
  const t = text.trim();
  if (encoding === 'hex') return HEX.test(t) ? Buffer.from(t, 'hex') : null;
  return BASE64.test(t) ? Buffer.from(t, 'base64') : null;
}

/** Constant time for equal lengths; a length difference is no secret (every digest of one algorithm has one length). */
function equal(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}
