/**
 * Telegram node (docs/workflow-engine.md, "Telegram"): one message, sent with the Bot API's
 * sendMessage (`POST https://api.telegram.org/bot<token>/sendMessage`, a JSON body) and a
 * telegram_bot credential's token, through the guarded HttpClient (chat-post.ts). The token is in
 * the path, so it goes to Telegram's API only: the base URL is fixed (tests alone point it
 * elsewhere) and a redirect to another origin is refused. Telegram answers `{ ok: true, result }` or
 * `{ ok: false, error_code, description, parameters? }`: a 429 (`parameters.retry_after`, seconds)
 * is repeated by the node's retry policy after that delay; nothing else is (a repeat could send
 * twice). The recorded input names the credential, never the token.
 */
import { TELEGRAM_LIMITS, type NodeParams } from '@flowdesk/contracts';
import { HttpStatusError, NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import { onlyAfter429, postChatJson } from './chat-post.ts';
import type { NodeHandler } from './node-handler.ts';

export type TelegramParams = NodeParams<'telegram'>;

/** Telegram's Bot API. Only tests point the node elsewhere (TelegramNodeOptions); a workflow cannot. */
export const TELEGRAM_API_URL = 'https://api.telegram.org';

export interface TelegramNodeOptions {
  /** The Bot API's base URL (tests: a stand-in on loopback). */
  apiUrl: string;
}

/** sendMessage's body, as the Bot API documents it (the fields this node sets). */
export interface TelegramMessage {
  chat_id: string;
  text: string;
  parse_mode?: 'MarkdownV2' | 'HTML';
  disable_notification?: boolean;
  reply_parameters?: { message_id: number };
}

export interface TelegramInput {
  credential: string;
  /** Not recorded: the bot token. */
  token: string;
  message: TelegramMessage;
  /** What is wrong with the rendered params: execute fails the step with it. */
  problem?: string;
}

interface TelegramAnswer {
  ok?: unknown;
  result?: unknown;
  error_code?: unknown;
  description?: unknown;
  parameters?: { retry_after?: unknown; migrate_to_chat_id?: unknown };
}

export function telegramHandler(overrides: Partial<TelegramNodeOptions> = {}): NodeHandler<TelegramParams, TelegramInput> {
  const apiUrl = (overrides.apiUrl ?? TELEGRAM_API_URL).replace(/\/+$/, '');
  return {
    isAction: true,
    render: (params, renderer) => renderTelegram(params, renderer),
    mask: ({ token: _token, problem: _problem, ...input }) => input,
    execute: async (input, ctx) => {
      if (input.problem) throw new NodeFailedError(input.problem);
      const answer = await postChatJson(
        {
          url: `${apiUrl}/bot${input.token}/sendMessage`,
          body: input.message,
          credentialIn: ['the URL'],
          timeoutMs: TELEGRAM_LIMITS.timeoutMs,
          maxBodyBytes: TELEGRAM_LIMITS.maxResponseBytes,
        },
        ctx,
      );
      const body = answer.json as TelegramAnswer | undefined;
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new (answer.status >= 400 ? HttpStatusError : NodeFailedError)(`Telegram answered HTTP ${answer.status} without JSON`, answer.status, {
          status: answer.status,
          body: answer.text.slice(0, 500),
        });
      if (body.ok === true && answer.status < 300) return { output: body.result ?? null };
      const code = typeof body.error_code === 'number' ? body.error_code : answer.status;
      const description = typeof body.description === 'string' ? body.description.slice(0, 500) : 'no description given';
      const moved = body.parameters?.migrate_to_chat_id;
      const hint = typeof moved === 'number' || typeof moved === 'string' ? ` (the group is now the supergroup ${moved}: use that chat id)` : '';
      const message = `Telegram refused the message: ${description} (error ${code})${hint}`;
      // The retry policy reads the status; Telegram says when to try again in parameters.retry_after (seconds).
      const after = body.parameters?.retry_after;
      const retryAfter = typeof after === 'number' && after >= 0 ? String(Math.ceil(after)) : answer.headers['retry-after'];
      const status = code === 429 || answer.status === 429 ? 429 : answer.status >= 400 ? answer.status : code;
      throw new HttpStatusError(message, status, body, retryAfter);
    },
    retrySafe: onlyAfter429,
  };
}

export function renderTelegram(params: TelegramParams, renderer: TemplateRenderer): TelegramInput {
  const { fields } = renderer.typedCredential(params.credential, ['telegram_bot']);
  const chatId = renderer.renderString(params.chatId).trim();
  const text = renderer.renderString(params.text);
  const message: TelegramMessage = { chat_id: chatId, text };
  const mode = params.parseMode ?? 'text';
  if (mode !== 'text') message.parse_mode = mode;
  if (params.disableNotification) message.disable_notification = true;
  const problems: string[] = [];
  if (!chatId) problems.push('chat id is empty: name the chat to send to');
  else if (!/^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,64})$/.test(chatId))
    problems.push(`chat id "${chatId.slice(0, 100)}" is neither a number nor @channelusername`);
  if (!text.trim()) problems.push('text is empty: write the message');
  else if (text.length > TELEGRAM_LIMITS.maxTextChars) problems.push(`text is longer than Telegram's ${TELEGRAM_LIMITS.maxTextChars} characters`);
  const reply = params.replyToMessageId === undefined ? '' : renderer.renderString(params.replyToMessageId).trim();
  if (reply) {
    if (/^[1-9][0-9]{0,15}$/.test(reply)) message.reply_parameters = { message_id: Number(reply) };
    else problems.push(`reply to message id "${reply.slice(0, 100)}" is not a message id (a whole number)`);
  }
  return { credential: params.credential, token: fields.token!, message, ...(problems.length ? { problem: problems[0] } : {}) };
}
