/**
 * Discord node (docs/workflow-engine.md, "Discord"): executes a webhook_url credential's Discord
 * webhook with { content, username, embeds } through the guarded HttpClient (chat-post.ts); with
 * `wait` (the default) as `?wait=true`, so Discord answers 200 with the message it posted instead of
 * 204. A 429 (`retry_after` in seconds in its JSON body) is repeated by the node's retry policy after
 * that delay; nothing else is. The recorded input names the credential, never the webhook URL.
 */
import { DISCORD_LIMITS, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import { chatStatusError, onlyAfter429, orProblem, postChatJson, renderJsonArray } from './chat-post.ts';
import type { NodeHandler } from './node-handler.ts';

export type DiscordParams = NodeParams<'discord'>;

export interface DiscordInput {
  credential: string;
  /** Not recorded: the webhook URL (its token is in the path). */
  url: string;
  message: { content?: string; username?: string; embeds?: unknown[] };
  wait: boolean;
  problem?: string;
}

export const discordHandler: NodeHandler<DiscordParams, DiscordInput> = {
  isAction: true,
  render: (params, renderer) => renderDiscord(params, renderer),
  mask: ({ url: _url, problem: _problem, ...input }) => input,
  execute: async (input, ctx) => {
    if (input.problem) throw new NodeFailedError(input.problem);
    const { message } = input;
    if (!message.content && !message.embeds?.length) throw new NodeFailedError('content is empty: write the message (or its embeds)');
    if ((message.content?.length ?? 0) > DISCORD_LIMITS.maxContentChars)
      throw new NodeFailedError(`content is longer than Discord's ${DISCORD_LIMITS.maxContentChars} characters`);
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      throw new NodeFailedError(`credential "${input.credential}" does not hold a valid URL`);
    }
    if (input.wait) url.searchParams.set('wait', 'true');
    const answer = await postChatJson(
      { url: url.href, body: message, credentialIn: ['the URL'], timeoutMs: DISCORD_LIMITS.timeoutMs, maxBodyBytes: DISCORD_LIMITS.maxResponseBytes },
      ctx,
    );
    if (answer.status >= 300) {
      // A 429's JSON says when to try again, in seconds (a fraction): Retry-After wants whole seconds.
      const after = (answer.json as { retry_after?: unknown } | undefined)?.retry_after;
      const retryAfter = typeof after === 'number' && after >= 0 ? String(Math.ceil(after)) : undefined;
      throw chatStatusError('Discord', answer, retryAfter ?? answer.headers['retry-after']);
    }
    return { output: answer.status === 204 || answer.json === undefined ? { ok: true } : answer.json };
  },
  retrySafe: onlyAfter429,
};

export function renderDiscord(params: DiscordParams, renderer: TemplateRenderer): DiscordInput {
  const typed = renderer.typedCredential(params.credential, ['webhook_url']);
  const embeds = orProblem(() => renderJsonArray('embeds', params.embeds, DISCORD_LIMITS.maxEmbeds, renderer));
  const message: DiscordInput['message'] = {};
  const content = params.content === undefined ? '' : renderer.renderString(params.content);
  if (content.trim()) message.content = content;
  const username = params.username === undefined ? '' : renderer.renderString(params.username).trim();
  if (username) message.username = username;
  if (embeds.value) message.embeds = embeds.value;
  return {
    credential: params.credential,
    url: typed.fields.url!,
    message,
    wait: params.wait ?? true,
    ...(embeds.problem ? { problem: embeds.problem } : {}),
  };
}
