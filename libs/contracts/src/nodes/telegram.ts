import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/**
 * Limits of a Telegram node (docs/workflow-engine.md, "Telegram"): the Bot API's own (a message is
 * 1 to 4,096 characters after entities are parsed), the request's time limit and the answer kept.
 */
export const TELEGRAM_LIMITS = {
  maxTextChars: 4_096,
  maxChatIdChars: 200,
  timeoutMs: 15_000,
  maxResponseBytes: 256 * 1024,
} as const;

/** How Telegram reads the text: as it is (`text`, no parse_mode sent), MarkdownV2 or HTML. */
export const TELEGRAM_PARSE_MODES = ['text', 'MarkdownV2', 'HTML'] as const;

export const telegram = defineNode({
  type: 'telegram',
  action: true,
  label: 'Telegram',
  description: "Sends a Telegram message with sendMessage and a telegram_bot credential's token (to Telegram's Bot API only); retried only after a 429.",
  idPrefix: 'telegram',
  icon: 'world-upload',
  color: 'cyan',
  params: Type.Object(
    {
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      /** A chat id (a user's or a group's, -100… for a supergroup or channel) or @channelusername. */
      chatId: Templated(TELEGRAM_LIMITS.maxChatIdChars),
      text: Templated(TELEGRAM_LIMITS.maxTextChars),
      /** text (default): sent as written; MarkdownV2 / HTML: Telegram's formatting. */
      parseMode: Type.Optional(StringEnum(TELEGRAM_PARSE_MODES)),
      /** Sends the message silently (the users get a notification without sound). */
      disableNotification: Type.Optional(Type.Boolean()),
      /** The id of a message in the same chat to answer (reply_parameters.message_id). */
      replyToMessageId: Type.Optional(Templated(100)),
    },
    { additionalProperties: false },
  ),
  fields: {
    credential: {
      label: 'Credential',
      placeholder: 'telegram_bot',
      trim: true,
      description: 'A credential (Settings → Credentials) of type Telegram bot token: the token BotFather gave (123456:ABC…).',
    },
    chatId: {
      label: 'Chat id',
      template: true,
      trim: true,
      placeholder: '-1001234567890 or @my_channel',
      description: 'The bot must be in the group or an admin of the channel; a user must have started a chat with it.',
    },
    text: { label: 'Text', template: true, multiline: true, placeholder: 'Order {{trigger.order.id}} was paid' },
    parseMode: {
      label: 'Formatting',
      default: 'text',
      options: [
        { value: 'text', label: 'Plain text' },
        { value: 'MarkdownV2', label: 'MarkdownV2' },
        { value: 'HTML', label: 'HTML' },
      ],
      description: 'MarkdownV2 needs _ * [ ] ( ) ~ ` > # + - = | { } . ! escaped with \\ outside formatting; Telegram refuses the message otherwise.',
    },
    disableNotification: { label: 'Send silently', default: false, description: 'The users get a notification without sound.' },
    replyToMessageId: {
      label: 'Reply to message id',
      template: true,
      trim: true,
      placeholder: '{{nodes.telegram.message_id}}',
      description: 'A message in the same chat (a whole number).',
    },
  },
  output:
    "The message Telegram sent (`{ message_id, chat, date, text, … }`). Telegram's `ok: false` fails the node with its description (Bad Request: chat not found…).",
  summary: (p) => `${p.chatId || '(no chat yet)'}: ${p.text || '…'}`,
});
