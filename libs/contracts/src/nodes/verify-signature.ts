import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode } from './define.ts';

/**
 * The signature formats a Verify signature node knows (docs/workflow-engine.md, "Verify signature"):
 * GitHub (`X-Hub-Signature-256: sha256=<hex>`), Stripe (`Stripe-Signature: t=…,v1=<hex>` over
 * `t.body`), Shopify (`X-Shopify-Hmac-Sha256: <base64>`), Standard Webhooks (`webhook-signature:
 * v1,<base64>` over `id.timestamp.body`, secret `whsec_<base64>`) and a custom header.
 */
export const SIGNATURE_PRESETS = ['github', 'stripe', 'shopify', 'standard_webhooks', 'custom'] as const;
export type SignaturePreset = (typeof SIGNATURE_PRESETS)[number];
/** Default timestamp tolerance (Stripe, Standard Webhooks), in seconds; the most a node may set. */
export const SIGNATURE_DEFAULT_TOLERANCE_SECONDS = 300;
export const SIGNATURE_MAX_TOLERANCE_SECONDS = 86_400;

const custom = (p: { preset?: string }) => p.preset !== 'custom';
const timed = (p: { preset?: string }) => p.preset !== 'stripe' && p.preset !== 'standard_webhooks';

export const verifySignature = defineNode({
  type: 'verify_signature',
  action: false,
  label: 'Verify signature',
  description:
    "Checks the provider's HMAC signature of the raw request body (GitHub, Stripe, Shopify, Standard Webhooks or a custom header) with a secret from Credentials, and follows its `true` or `false` branch.",
  idPrefix: 'verify',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object(
    {
      preset: StringEnum(SIGNATURE_PRESETS),
      /** The credential holding the signing secret (Settings → Credentials), by name. */
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      /** custom: the header carrying the signature. */
      header: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" })),
      /** custom: the HMAC's hash. */
      algorithm: Type.Optional(StringEnum(['sha256', 'sha1'])),
      /** custom: how the header writes the digest. */
      encoding: Type.Optional(StringEnum(['hex', 'base64'])),
      /** custom: text in front of the digest (`sha256=`), removed before comparing. */
      prefix: Type.Optional(Type.String({ maxLength: 50 })),
      /** stripe, standard_webhooks: how far the signed timestamp may be from now, in seconds (default 300). */
      toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: SIGNATURE_MAX_TOLERANCE_SECONDS })),
      /**
       * Refuse a repeated delivery: a genuine delivery whose id (webhook-id, the Stripe event id,
       * X-GitHub-Delivery, X-Shopify-Webhook-Id; custom: the signature) was accepted by this workflow
       * within the tolerance window fails the step. Default: on for the provider presets, off for custom.
       */
      refuseReplays: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  fields: {
    preset: {
      label: 'Provider',
      default: 'github',
      options: [
        { value: 'github', label: 'GitHub (X-Hub-Signature-256)' },
        { value: 'stripe', label: 'Stripe (Stripe-Signature)' },
        { value: 'shopify', label: 'Shopify (X-Shopify-Hmac-Sha256)' },
        { value: 'standard_webhooks', label: 'Standard Webhooks (Svix, Clerk, Resend…)' },
        { value: 'custom', label: 'Custom header' },
      ],
    },
    credential: {
      label: 'Secret (credential name)',
      placeholder: 'github_webhook_secret',
      trim: true,
      description: 'The name of the credential holding the signing secret (Settings → Credentials). Standard Webhooks: the whsec_… secret.',
    },
    header: { label: 'Signature header', placeholder: 'X-Signature', trim: true, hiddenWhen: custom, dropWhenHidden: true },
    algorithm: {
      label: 'Algorithm',
      default: 'sha256',
      options: [
        { value: 'sha256', label: 'HMAC SHA-256' },
        { value: 'sha1', label: 'HMAC SHA-1' },
      ],
      hiddenWhen: custom,
      dropWhenHidden: true,
    },
    encoding: {
      label: 'Encoding',
      default: 'hex',
      options: [
        { value: 'hex', label: 'hex' },
        { value: 'base64', label: 'base64' },
      ],
      hiddenWhen: custom,
      dropWhenHidden: true,
    },
    prefix: { label: 'Prefix', placeholder: 'sha256=', description: 'Text in front of the digest, if any.', hiddenWhen: custom, dropWhenHidden: true },
    toleranceSeconds: {
      label: 'Timestamp tolerance (seconds)',
      widget: 'json',
      placeholder: '300',
      description: 'Deliveries signed further than this from now are refused (default 300).',
      hiddenWhen: timed,
      dropWhenHidden: true,
    },
    refuseReplays: {
      label: 'Refuse a repeated delivery',
      widget: 'json',
      placeholder: 'true',
      description:
        'A delivery id this workflow accepted within the tolerance window fails the step (a replayed request). Default: on for the providers, off for a custom header (its id is the signature).',
    },
  },
  branches: ['true', 'false'],
  output:
    '`{ valid, preset, reason?, message? }`: on failure `reason` is `missing_header`, `bad_format`, `timestamp_out_of_tolerance`, `mismatch` or `no_raw_body`, and `message` says it in words; never the secret or the expected signature.',
  note: 'Connect **true** to what runs for a genuine delivery and **false** to what handles a forged one (a Stop, for one). A branch left unconnected ends the run there.',
  summary: (p) => `${p.preset === 'custom' ? (p.header ?? 'Custom header') : p.preset.replace('_', ' ')} with ${p.credential || '…'}`,
});
