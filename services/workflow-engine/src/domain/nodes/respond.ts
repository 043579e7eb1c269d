/**
 * Respond node: the answer to the webhook's caller (docs/workflow-engine.md, "Respond"). Renders the
 * status, headers and JSON body, refuses hop-by-hop and security-sensitive headers and bodies above
 * WEBHOOK_REPLY_MAX_BODY (the node fails with the reason), and hands the answer to the run's reply
 * hook (NodeContext.respond). Only the first Respond node of a run answers; a later one, or one in a
 * run nobody waits for, is recorded with `sent: false` and a warning. The run goes on after it.
 */
import { responseHeaderProblem, WEBHOOK_REPLY_MAX_BODY, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { maskHeaders, maskJson } from '../mask.ts';
import type { NodeHandler } from './node-handler.ts';

export type RespondParams = NodeParams<'respond'>;
export interface RespondInput {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export const respondHandler: NodeHandler<RespondParams, RespondInput> = {
  isAction: false,
  render: (params, renderer) => ({
    status: params.status ?? 200,
    headers: renderer.renderMap(params.headers),
    body: params.body === undefined ? null : renderer.renderDeep(params.body),
  }),
  mask: (input) => ({ ...input, headers: maskHeaders(input.headers), body: maskJson(input.body) }),
  execute: async (input, ctx) => {
    if (!Number.isInteger(input.status) || input.status < 100 || input.status > 599)
      throw new NodeFailedError(`status ${input.status} is not an HTTP status (100–599)`);
    // An informational status cannot end a request: the caller would wait for the final one.
    if (input.status < 200) throw new NodeFailedError(`status ${input.status} is informational (1xx) and cannot answer a request; use 200–599`);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(input.headers)) {
      const problem = responseHeaderProblem(name, value);
      if (problem) throw new NodeFailedError(problem);
      headers[name.toLowerCase()] = value;
    }
    const size = Buffer.byteLength(JSON.stringify(input.body) ?? 'null');
    if (size > WEBHOOK_REPLY_MAX_BODY) throw new NodeFailedError(`the body is ${size} bytes, above the limit of ${WEBHOOK_REPLY_MAX_BODY}`);
    const answer = { status: input.status, headers, body: input.body };
    const sent = ctx.respond ? await ctx.respond(answer) : 'nobody-waits';
    if (sent === 'earlier') ctx.warn('a Respond node answered the caller earlier in this run; this answer was not sent');
    if (sent === 'nobody-waits') ctx.warn('nobody waits for this answer (the run was not started by a webhook set to answer from a Respond node)');
    return { output: { ...answer, sent: sent === 'sent' } };
  },
};
