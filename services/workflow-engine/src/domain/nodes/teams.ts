/**
 * Microsoft Teams node (docs/workflow-engine.md, "Microsoft Teams"): posts a message to a Teams
 * workflow webhook (Power Automate's "When a Teams webhook request is received", which replaced the
 * retired Office 365 connectors) through the guarded HttpClient (chat-post.ts). The body is the
 * message those workflows take: `{ type: 'message', attachments: [{ contentType:
 * 'application/vnd.microsoft.card.adaptive', content: <Adaptive Card> }] }`, the card made of the
 * title and text, or written whole. A 429 is repeated by the retry policy after its Retry-After;
 * nothing else is. The recorded input names the credential, never the webhook URL.
 */
import { TEAMS_LIMITS, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import { chatStatusError, onlyAfter429, orProblem, postChatJson, renderJsonText } from './chat-post.ts';
import type { NodeHandler } from './node-handler.ts';

export type TeamsParams = NodeParams<'teams'>;

export const ADAPTIVE_CARD_TYPE = 'application/vnd.microsoft.card.adaptive';

export interface TeamsInput {
  credential: string;
  /** Not recorded: the webhook URL (its signature is in the query). */
  url: string;
  card: Record<string, unknown>;
  problem?: string;
}

export const teamsHandler: NodeHandler<TeamsParams, TeamsInput> = {
  isAction: true,
  render: (params, renderer) => renderTeams(params, renderer),
  mask: ({ url: _url, problem: _problem, ...input }) => input,
  execute: async (input, ctx) => {
    if (input.problem) throw new NodeFailedError(input.problem);
    const body = { type: 'message', attachments: [{ contentType: ADAPTIVE_CARD_TYPE, contentUrl: null, content: input.card }] };
    const answer = await postChatJson(
      { url: input.url, body, credentialIn: ['the URL'], timeoutMs: TEAMS_LIMITS.timeoutMs, maxBodyBytes: TEAMS_LIMITS.maxResponseBytes },
      ctx,
    );
    if (answer.status >= 300) throw chatStatusError('Teams', answer);
    return { output: { ok: true, status: answer.status } };
  },
  retrySafe: onlyAfter429,
};

export function renderTeams(params: TeamsParams, renderer: TemplateRenderer): TeamsInput {
  const typed = renderer.typedCredential(params.credential, ['webhook_url']);
  const written = orProblem(() => renderJsonText('card', params.card, renderer));
  const base = { credential: params.credential, url: typed.fields.url! };
  if (written.problem) return { ...base, card: {}, problem: written.problem };
  if (written.value !== undefined) {
    const card = written.value;
    if (card === null || typeof card !== 'object' || Array.isArray(card))
      return { ...base, card: {}, problem: 'card must be a JSON object (an Adaptive Card)' };
    return { ...base, card: card as Record<string, unknown> };
  }
  const title = params.title === undefined ? '' : renderer.renderString(params.title).trim();
  const text = params.text === undefined ? '' : renderer.renderString(params.text);
  const blocks: Record<string, unknown>[] = [];
  if (title) blocks.push({ type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true });
  if (text.trim()) blocks.push({ type: 'TextBlock', text, wrap: true });
  const card = { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body: blocks };
  return { ...base, card, ...(blocks.length === 0 ? { problem: 'title and text are empty: write the message (or a card)' } : {}) };
}
