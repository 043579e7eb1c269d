/**
 * What the chat nodes (Slack, Discord, Microsoft Teams) share: one JSON POST through the guarded HttpClient port (the
 * SSRF guard, time limit and size limit of every outbound call), the answer decoded, and their retry
 * rule. A chat message has no idempotency key, so a repeat after a lost answer or a 5xx could post it
 * twice: only a 429 (refused before anything was posted) is repeated by the node's retry policy, after
 * the service's Retry-After.
 */
import { HttpStatusError, NodeFailedError } from '../errors.ts';
import { failureKind } from '../retry.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeContext } from './node-handler.ts';

export interface ChatPost {
  url: string;
  headers?: Record<string, string>;
  body: unknown;
  /** Where the request carries a credential (a header, the URL): never sent on to another origin. */
  credentialHeaders?: string[];
  credentialIn: string[];
  timeoutMs: number;
  maxBodyBytes: number;
}

export interface ChatAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text, and parsed when it is JSON (undefined otherwise). */
  text: string;
  json: unknown;
}

/** Posts `body` as JSON (Content-Type: application/json; charset=utf-8) and reads the answer. */
export async function postChatJson(post: ChatPost, ctx: NodeContext): Promise<ChatAnswer> {
  const res = await ctx.ports.http.send({
    method: 'POST',
    url: post.url,
    headers: { ...post.headers, 'Content-Type': 'application/json; charset=utf-8' },
    credentialHeaders: post.credentialHeaders ?? [],
    credentialIn: post.credentialIn,
    body: JSON.stringify(post.body),
    timeoutMs: post.timeoutMs,
    maxBodyBytes: post.maxBodyBytes,
    signal: ctx.signal,
  });
  const text = new TextDecoder('utf-8').decode(res.body);
  let json: unknown;
  try {
    json = text.trim() ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A failed answer (400 or more) as the error the retry policy reads: its status and when to try again. */
export function chatStatusError(service: string, answer: ChatAnswer, retryAfter = answer.headers['retry-after']): HttpStatusError {
  const detail = answer.json ?? answer.text.slice(0, 500);
  const reason = typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 500);
  return new HttpStatusError(
    `${service} answered HTTP ${answer.status}${reason ? `: ${reason}` : ''}`,
    answer.status,
    { status: answer.status, body: detail },
    retryAfter,
  );
}

/** The chat nodes' retrySafe: only a 429, which the service refused before posting anything. */
export const onlyAfter429 = (_input: unknown, err?: unknown): boolean => failureKind(err) === '429';

/**
 * A field written as JSON text (Slack's blocks, Discord's embeds, a Teams card): parsed BEFORE
 * rendering (as HTTP Request's body is), so a value with quotes cannot break out of its string, then
 * rendered. Throws NodeFailedError when it is not JSON; undefined when empty.
 */
export function renderJsonText(name: string, template: string | undefined, renderer: TemplateRenderer): unknown {
  if (template === undefined || !template.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(template);
  } catch {
    throw new NodeFailedError(`${name} is not valid JSON`);
  }
  return renderer.renderDeep(parsed);
}

/** renderJsonText for an array of at most `max` items. */
export function renderJsonArray(name: string, template: string | undefined, max: number, renderer: TemplateRenderer): unknown[] | undefined {
  const value = renderJsonText(name, template, renderer);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new NodeFailedError(`${name} must be a JSON array`);
  const items: unknown[] = value;
  if (items.length > max) throw new NodeFailedError(`${name} holds ${items.length} items; at most ${max}`);
  return items;
}

/** Runs a render step that may find the node's params wrong: the problem is kept for execute to fail the step with. */
export function orProblem<T>(fn: () => T): { value?: T; problem?: string } {
  try {
    return { value: fn() };
  } catch (err) {
    if (!(err instanceof NodeFailedError)) throw err;
    return { problem: err.message };
  }
}
