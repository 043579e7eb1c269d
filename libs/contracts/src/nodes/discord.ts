import Type from 'typebox';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/** Limits of a Discord node (docs/workflow-engine.md, "Discord"): Discord's own, the request's time limit and the answer kept. */
export const DISCORD_LIMITS = {
  maxContentChars: 2_000,
  maxUsernameChars: 80,
  maxEmbeds: 10,
  maxEmbedsChars: 50_000,
  timeoutMs: 15_000,
  maxResponseBytes: 256 * 1024,
} as const;

export const discord = defineNode({
  type: 'discord',
  action: true,
  label: 'Discord',
  description: "Posts a message through a webhook_url credential's Discord webhook (SSRF-guarded), content and/or embeds; retried only after a 429.",
  idPrefix: 'discord',
  icon: 'world-upload',
  color: 'indigo',
  params: Type.Object(
    {
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      content: Type.Optional(Templated(DISCORD_LIMITS.maxContentChars)),
      username: Type.Optional(Templated(DISCORD_LIMITS.maxUsernameChars)),
      /** Embeds as JSON text (an array of embed objects). */
      embeds: Type.Optional(Templated(DISCORD_LIMITS.maxEmbedsChars)),
      /** Wait for the message (`?wait=true`) and output it; default true. */
      wait: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  fields: {
    credential: {
      label: 'Webhook credential',
      placeholder: 'discord_alerts',
      trim: true,
      description: "A credential of type Incoming webhook URL (Settings → Credentials) holding the channel's webhook URL.",
    },
    content: { label: 'Content', template: true, multiline: true, placeholder: 'Order {{trigger.order.id}} was paid' },
    username: { label: 'Username', template: true, description: "Overrides the webhook's name." },
    embeds: {
      label: 'Embeds (JSON)',
      template: true,
      multiline: true,
      placeholder: '[{ "title": "{{trigger.title}}", "description": "…" }]',
      description: `Up to ${DISCORD_LIMITS.maxEmbeds}.`,
    },
    wait: { label: 'Wait for the message', default: true, description: 'Output the posted message (its id); off: Discord answers 204 without it.' },
  },
  output:
    'With wait (default): the message Discord posted (`{ id, channel_id, content, … }`). Without: `{ ok: true }`. An answer other than 2xx fails the node.',
  summary: (p) => p.content || (p.embeds ? '(embeds)' : '(no content yet)'),
});
