import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/**
 * Limits of a Slack node (docs/workflow-engine.md, "Slack"): Slack's own (text is cut at 40,000
 * characters, at most 50 blocks), the request's time limit and the answer kept.
 */
export const SLACK_LIMITS = {
  maxTextChars: 40_000,
  maxBlocks: 50,
  maxBlocksChars: 50_000,
  timeoutMs: 15_000,
  maxResponseBytes: 256 * 1024,
} as const;

export const SLACK_MODES = ['bot', 'webhook'] as const;

export const slack = defineNode({
  type: 'slack',
  action: true,
  label: 'Slack',
  description:
    "Posts a Slack message: chat.postMessage with a slack_bot credential's token, or a webhook_url credential's incoming webhook (SSRF-guarded); retried only after a 429.",
  idPrefix: 'slack',
  icon: 'world-upload',
  color: 'grape',
  params: Type.Object(
    {
      /** bot (default): chat.postMessage with a slack_bot credential; webhook: a webhook_url credential's incoming webhook. */
      mode: Type.Optional(StringEnum(SLACK_MODES)),
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      /** bot mode: a channel id (C…), #name or user id. */
      channel: Type.Optional(Templated(200)),
      text: Templated(SLACK_LIMITS.maxTextChars),
      /** Block Kit blocks as JSON text (an array); `text` is then the notification's fallback. */
      blocks: Type.Optional(Templated(SLACK_LIMITS.maxBlocksChars)),
      /** bot mode: the ts of the message to reply to in its thread. */
      threadTs: Type.Optional(Templated(100)),
    },
    { additionalProperties: false },
  ),
  fields: {
    mode: {
      label: 'Send with',
      default: 'bot',
      options: [
        { value: 'bot', label: 'Bot token (chat.postMessage)' },
        { value: 'webhook', label: 'Incoming webhook' },
      ],
    },
    credential: {
      label: 'Credential',
      placeholder: 'slack_bot',
      trim: true,
      description: 'A credential (Settings → Credentials) of type Slack bot token, or Incoming webhook URL when sending with a webhook.',
    },
    channel: {
      label: 'Channel',
      template: true,
      placeholder: 'C0123456789 or #alerts',
      description: 'The bot must be a member of it.',
      hiddenWhen: (p) => p.mode === 'webhook',
    },
    text: { label: 'Text', template: true, multiline: true, placeholder: 'Order {{trigger.order.id}} was paid' },
    blocks: {
      label: 'Blocks (JSON)',
      template: true,
      multiline: true,
      placeholder: '[{ "type": "section", "text": { "type": "mrkdwn", "text": "*{{trigger.title}}*" } }]',
      description: `Block Kit, up to ${SLACK_LIMITS.maxBlocks} blocks; the text is then the notification's fallback.`,
    },
    threadTs: {
      label: 'Reply in thread (ts)',
      template: true,
      placeholder: '{{nodes.slack.ts}}',
      hiddenWhen: (p) => p.mode === 'webhook',
    },
  },
  output:
    "Bot: `{ ok, channel, ts, message }` (`ts` answers in its thread). Webhook: `{ ok: true }`. Slack's `ok: false` (channel_not_found, not_in_channel…) fails the node with its error.",
  summary: (p) => (p.mode === 'webhook' ? `Webhook: ${p.text || '…'}` : `${p.channel || '(no channel yet)'}: ${p.text || '…'}`),
});
