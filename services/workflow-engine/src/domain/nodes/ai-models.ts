/**
 * The AI step's two model APIs (docs/workflow-engine.md, "AI step"): OpenAI's Chat Completions
 * (`POST <baseUrl>/chat/completions`, an openai_compatible credential) and Anthropic's Messages
 * (`POST <baseUrl>/v1/messages`, an anthropic credential). Each turns the step's conversation into
 * its request shape and its answer back into one `ModelTurn`; both post through the guarded
 * HttpClient (chat-post.ts: the SSRF guard, the time and size limits), and an answer of 400 or more
 * becomes the HttpStatusError the retry policy reads (429 and 5xx, with Retry-After).
 */
import { AI_LIMITS } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { chatStatusError, postChatJson } from './chat-post.ts';
import type { NodeContext } from './node-handler.ts';

export type Provider = 'openai' | 'anthropic';

/** A tool the model may call, as the MCP server listed it. */
export interface ModelTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (parsed; `{}` when it wrote none). */
  arguments: unknown;
  /** The model's arguments were not JSON. */
  badArguments?: string;
}

/** One entry of the conversation after the system message, the same for both APIs. */
export type Turn =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What one model call answered. */
export interface ModelTurn {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: Usage;
  model: string;
}

export interface ModelRequest {
  provider: Provider;
  baseUrl: string;
  apiKey?: string;
  /** openai: how the key is sent (Azure OpenAI's api-key header). */
  keyHeader?: 'bearer' | 'api-key';
  model: string;
  system?: string;
  turns: Turn[];
  tools: ModelTool[];
  temperature?: number;
  maxTokens: number;
  /** Structured output: the JSON Schema the answer must follow. */
  schema?: Record<string, unknown>;
  timeoutMs: number;
}

/** One model call. */
export async function callModel(req: ModelRequest, ctx: NodeContext): Promise<ModelTurn> {
  return req.provider === 'openai' ? callOpenAi(req, ctx) : callAnthropic(req, ctx);
}

const base = (url: string) => url.replace(/\/+$/, '');

async function post(service: string, url: string, headers: Record<string, string>, body: unknown, req: ModelRequest, ctx: NodeContext) {
  const answer = await postChatJson(
    {
      url,
      headers,
      body,
      credentialHeaders: Object.keys(headers),
      credentialIn: Object.keys(headers).map((h) => `header "${h}"`),
      timeoutMs: req.timeoutMs,
      maxBodyBytes: AI_LIMITS.maxResponseBytes,
    },
    ctx,
  );
  if (answer.status >= 400) throw chatStatusError(service, answer);
  if (answer.status >= 300 || !answer.json || typeof answer.json !== 'object')
    throw new NodeFailedError(`${service} answered HTTP ${answer.status} without a JSON answer`, { status: answer.status, body: answer.text.slice(0, 500) });
  return answer.json as Record<string, unknown>;
}

// ---- OpenAI Chat Completions ----

async function callOpenAi(req: ModelRequest, ctx: NodeContext): Promise<ModelTurn> {
  const headers: Record<string, string> = {};
  if (req.apiKey) {
    if (req.keyHeader === 'api-key') headers['api-key'] = req.apiKey;
    else headers.Authorization = `Bearer ${req.apiKey}`;
  }
  const messages: unknown[] = [];
  if (req.system) messages.push({ role: 'system', content: req.system });
  for (const t of req.turns) {
    if (t.role === 'user') messages.push({ role: 'user', content: t.content });
    else if (t.role === 'tool') messages.push({ role: 'tool', tool_call_id: t.toolCallId, content: t.content });
    else
      messages.push({
        role: 'assistant',
        content: t.content || null,
        ...(t.toolCalls?.length
          ? {
              tool_calls: t.toolCalls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.badArguments ?? JSON.stringify(c.arguments ?? {}) },
              })),
            }
          : {}),
      });
  }
  const body: Record<string, unknown> = { model: req.model, messages, max_tokens: req.maxTokens };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.tools.length)
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.inputSchema },
    }));
  if (req.schema) body.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: req.schema } };
  const json = await post('The model API', `${base(req.baseUrl)}/chat/completions`, headers, body, req, ctx);
  const choice = (json.choices as { message?: Record<string, unknown>; finish_reason?: unknown }[] | undefined)?.[0];
  const message = choice?.message;
  if (!message) throw new NodeFailedError('The model API answered without choices[0].message', json);
  const usage = (json.usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  const toolCalls = ((message.tool_calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] | undefined) ?? []).map((c, i): ToolCall => {
    const raw = typeof c.function?.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function?.arguments ?? {});
    const call: ToolCall = { id: typeof c.id === 'string' ? c.id : `call_${i}`, name: str(c.function?.name), arguments: {} };
    try {
      call.arguments = raw.trim() ? JSON.parse(raw) : {};
    } catch {
      call.badArguments = raw;
    }
    return call;
  });
  return {
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls,
    finishReason: str(choice.finish_reason),
    usage: { inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens) },
    model: typeof json.model === 'string' ? json.model : req.model,
  };
}

// ---- Anthropic Messages ----

/** The Messages API version the node speaks (the anthropic-version header). */
export const ANTHROPIC_VERSION = '2023-06-01';

async function callAnthropic(req: ModelRequest, ctx: NodeContext): Promise<ModelTurn> {
  const headers: Record<string, string> = { 'x-api-key': req.apiKey ?? '', 'anthropic-version': ANTHROPIC_VERSION };
  const messages: { role: 'user' | 'assistant'; content: unknown[] }[] = [];
  const push = (role: 'user' | 'assistant', block: unknown) => {
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(block);
    else messages.push({ role, content: [block] });
  };
  for (const t of req.turns) {
    if (t.role === 'user') push('user', { type: 'text', text: t.content });
    else if (t.role === 'tool') push('user', { type: 'tool_result', tool_use_id: t.toolCallId, content: t.content, ...(t.isError ? { is_error: true } : {}) });
    else {
      if (t.content) push('assistant', { type: 'text', text: t.content });
      for (const c of t.toolCalls ?? []) push('assistant', { type: 'tool_use', id: c.id, name: c.name, input: c.arguments ?? {} });
    }
  }
  // The Messages API has no response format: the schema is asked for in the system prompt, and the answer validated.
  const system = [req.system, req.schema ? schemaInstruction(req.schema) : ''].filter(Boolean).join('\n\n');
  const body: Record<string, unknown> = { model: req.model, max_tokens: req.maxTokens, messages };
  if (system) body.system = system;
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1);
  if (req.tools.length)
    body.tools = req.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.inputSchema }));
  const json = await post('The Anthropic API', `${base(req.baseUrl)}/v1/messages`, headers, body, req, ctx);
  const content = json.content as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }[] | undefined;
  if (!Array.isArray(content)) throw new NodeFailedError('The Anthropic API answered without content', json);
  const usage = (json.usage ?? {}) as { input_tokens?: unknown; output_tokens?: unknown };
  return {
    text: content
      .filter((b) => b.type === 'text')
      .map((b) => str(b.text))
      .join(''),
    toolCalls: content
      .filter((b) => b.type === 'tool_use')
      .map((b, i) => ({ id: typeof b.id === 'string' ? b.id : `toolu_${i}`, name: str(b.name), arguments: b.input ?? {} })),
    finishReason: str(json.stop_reason),
    usage: { inputTokens: num(usage.input_tokens), outputTokens: num(usage.output_tokens) },
    model: typeof json.model === 'string' ? json.model : req.model,
  };
}

export function schemaInstruction(schema: Record<string, unknown>): string {
  return `Answer with one JSON value only (no prose, no code fence) that is valid against this JSON Schema:\n${JSON.stringify(schema)}`;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
