import Type from 'typebox';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/** Limits of a Microsoft Teams node (docs/workflow-engine.md, "Microsoft Teams"): Teams' message size (28 KB), the time limit and the answer kept. */
export const TEAMS_LIMITS = {
  maxTextChars: 20_000,
  maxCardChars: 28_000,
  timeoutMs: 15_000,
  maxResponseBytes: 64 * 1024,
} as const;

export const teams = defineNode({
  type: 'teams',
  action: true,
  label: 'Microsoft Teams',
  description: "Posts an Adaptive Card to a Teams channel through a webhook_url credential's Workflows webhook (SSRF-guarded); retried only after a 429.",
  idPrefix: 'teams',
  icon: 'world-upload',
  color: 'violet',
  params: Type.Object(
    {
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      title: Type.Optional(Templated(500)),
      text: Type.Optional(Templated(TEAMS_LIMITS.maxTextChars)),
      /** A whole Adaptive Card as JSON text (an object); replaces the card made of title and text. */
      card: Type.Optional(Templated(TEAMS_LIMITS.maxCardChars)),
    },
    { additionalProperties: false },
  ),
  fields: {
    credential: {
      label: 'Webhook credential',
      placeholder: 'teams_alerts',
      trim: true,
      description:
        'A credential of type Incoming webhook URL (Settings → Credentials): the URL of a Teams workflow "When a Teams webhook request is received".',
    },
    title: { label: 'Title', template: true, placeholder: 'Order {{trigger.order.id}}' },
    text: { label: 'Text', template: true, multiline: true, description: 'Markdown as Adaptive Cards render it.' },
    card: {
      label: 'Adaptive Card (JSON)',
      template: true,
      multiline: true,
      placeholder: '{ "type": "AdaptiveCard", "version": "1.4", "body": [{ "type": "TextBlock", "text": "{{trigger.title}}" }] }',
      description: 'Optional: a whole card, sent instead of the one made of the title and text.',
    },
  },
  output: '`{ ok: true, status }` (Teams workflows answer 202 Accepted). An answer other than 2xx fails the node.',
  summary: (p) => p.title || p.text || (p.card ? '(card)' : '(no text yet)'),
});
