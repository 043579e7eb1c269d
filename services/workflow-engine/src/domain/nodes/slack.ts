/**
 * Slack node (docs/workflow-engine.md, "Slack"): one message, posted with chat.postMessage and a
 * slack_bot credential's token (Authorization: Bearer, to Slack's API only), or to a webhook_url
 * credential's incoming webhook. Both go through the guarded HttpClient (chat-post.ts). Slack answers
 * an API failure with HTTP 200 and `{ ok: false, error }`: that fails the step with Slack's error. A 429
 * is repeated by the node's retry policy after its Retry-After; nothing else is (a repeat could post
 * twice). The recorded input names the credential, never the token or the webhook URL.
 */
import { SLACK_LIMITS, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import { chatStatusError, onlyAfter429, orProblem, postChatJson, renderJsonArray } from './chat-post.ts';
import type { NodeHandler } from './node-handler.ts';

export type SlackParams = NodeParams<'slack'>;

/** Slack's Web API. Only tests point the node elsewhere (SlackNodeOptions); a workflow cannot. */
export const SLACK_API_URL = 'https://slack.com/api';

export interface SlackNodeOptions {
  /** The Web API's base URL (tests: a stand-in on loopback). */
  apiUrl: string;
}

export interface SlackInput {
  mode: 'bot' | 'webhook';
  credential: string;
  /** Not recorded: the bot token or the webhook URL. */
  secret: string;
  message: { channel?: string; text: string; blocks?: unknown[]; thread_ts?: string };
  /** What is wrong with the rendered params: execute fails the step with it. */
  problem?: string;
}

export function slackHandler(overrides: Partial<SlackNodeOptions> = {}): NodeHandler<SlackParams, SlackInput> {
  const apiUrl = (overrides.apiUrl ?? SLACK_API_URL).replace(/\/+$/, '');
  return {
    isAction: true,
    render: (params, renderer) => renderSlack(params, renderer),
    mask: ({ secret: _secret, problem: _problem, ...input }) => input,
    execute: async (input, ctx) => {
      if (input.problem) throw new NodeFailedError(input.problem);
      const { message } = input;
      if (!message.text.trim() && !message.blocks) throw new NodeFailedError('text is empty: write the message (or its blocks)');
      if (input.mode === 'webhook') {
        const answer = await postChatJson(
          { url: input.secret, body: message, credentialIn: ['the URL'], timeoutMs: SLACK_LIMITS.timeoutMs, maxBodyBytes: SLACK_LIMITS.maxResponseBytes },
          ctx,
        );
        // An incoming webhook answers 200 "ok", or 4xx with its error as text (invalid_payload, channel_not_found…).
        if (answer.status >= 300) throw chatStatusError('Slack', answer);
        return { output: { ok: true } };
      }
      if (!message.channel) throw new NodeFailedError('channel is empty: name the channel to post in');
      const answer = await postChatJson(
        {
          url: `${apiUrl}/chat.postMessage`,
          headers: { Authorization: `Bearer ${input.secret}` },
          body: message,
          credentialHeaders: ['Authorization'],
          credentialIn: ['header "Authorization"'],
          timeoutMs: SLACK_LIMITS.timeoutMs,
          maxBodyBytes: SLACK_LIMITS.maxResponseBytes,
        },
        ctx,
      );
      if (answer.status >= 300) throw chatStatusError('Slack', answer);
      const body = answer.json as { ok?: unknown; error?: unknown; warning?: unknown } | undefined;
      if (!body || typeof body !== 'object')
        throw new NodeFailedError(`Slack answered HTTP ${answer.status} without JSON`, { status: answer.status, body: answer.text.slice(0, 500) });
      if (body.ok !== true) throw new NodeFailedError(`Slack refused the message: ${typeof body.error === 'string' ? body.error : 'no error given'}`, body);
      if (typeof body.warning === 'string') ctx.warn(`Slack warned: ${body.warning}`);
      return { output: body };
    },
    retrySafe: onlyAfter429,
  };
}

export function renderSlack(params: SlackParams, renderer: TemplateRenderer): SlackInput {
  const mode = params.mode ?? 'bot';
  const typed = renderer.typedCredential(params.credential, mode === 'bot' ? ['slack_bot'] : ['webhook_url']);
  const blocks = orProblem(() => renderJsonArray('blocks', params.blocks, SLACK_LIMITS.maxBlocks, renderer));
  const message: SlackInput['message'] = { text: renderer.renderString(params.text) };
  if (mode === 'bot') {
    const channel = params.channel === undefined ? '' : renderer.renderString(params.channel).trim();
    const threadTs = params.threadTs === undefined ? '' : renderer.renderString(params.threadTs).trim();
    message.channel = channel;
    if (threadTs) message.thread_ts = threadTs;
  }
  if (blocks.value) message.blocks = blocks.value;
  return {
    mode,
    credential: params.credential,
    secret: mode === 'bot' ? typed.fields.token! : typed.fields.url!,
    message,
    ...(blocks.problem ? { problem: blocks.problem } : {}),
  };
}
