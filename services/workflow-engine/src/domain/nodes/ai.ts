/**
 * AI step (docs/workflow-engine.md, "AI step"): one conversation with a chat model, the API chosen by
 * the credential's type (openai_compatible: Chat Completions; anthropic: Messages; ai-models.ts),
 * through the guarded HttpClient. With MCP servers (ai-mcp.ts), their tools are offered to the model,
 * and the tool calls it makes are executed and fed back, in a loop bounded by the step's tool-call
 * limit and time. With an output schema the answer must be JSON valid against it (else the step
 * fails, saying where). Output: the answer, its usage and the transcript (each model call's messages,
 * tool calls and tokens), kept in the run record; a failure records the transcript so far.
 *
 * Each completed model call and tool call is a sub-step (NodeContext.subSteps): saved before the step
 * goes on, and read back instead of made again when the step is repeated (its retry policy, a run
 * resumed after a crash). So a 429, 5xx, network error or timeout of the model is retried by the
 * node's retry policy (after the API's Retry-After) without calling a completed tool again; a failure
 * during a tool call is not retried (the tool may have acted).
 */
import Schema from 'typebox/schema';
import { AI_LIMITS, credentialHttpAuth, type AiCost, type AiStepOutput, type AiTranscriptEntry, type AiUsage, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError, RequestTimeoutError } from '../errors.ts';
import { maskUrl } from '../mask.ts';
import type { TemplateRenderer } from '../template.ts';
import { callModel, type ModelTurn, type Provider, type ToolCall, type Turn } from './ai-models.ts';
import { callTool, closeAll, connectServers, offeredTools, type McpServerInput, type OfferedTool } from './ai-mcp.ts';
import { FLOWDESK_TOOLS, flowdeskTools, runFlowdeskTool, type FlowdeskToolsMode, type LocalTool } from './ai-flowdesk.ts';
import { orProblem } from './chat-post.ts';
import type { NodeContext, NodeHandler } from './node-handler.ts';

export type AiParams = NodeParams<'ai'>;

/** The credential types an AI step takes, and the API each chooses. */
const PROVIDER_OF: Record<string, Provider> = { openai_compatible: 'openai', anthropic: 'anthropic' };
/** The credential types an MCP server row takes. */
const MCP_CREDENTIAL_TYPES = ['bearer', 'header'];

export interface AiInput {
  provider: Provider;
  credential: string;
  baseUrl: string;
  model: string;
  system?: string;
  prompt: string;
  temperature?: number;
  maxTokens: number;
  schema?: Record<string, unknown>;
  /** The owner's Flowdesk tools offered (ai-flowdesk.ts). */
  flowdeskTools: FlowdeskToolsMode;
  mcpServers: McpServerInput[];
  maxToolCalls: number;
  timeoutMs: number;
  /** Per million tokens: the step's cost is worked out from them (absent: no cost). */
  inputPricePer1M?: number;
  outputPricePer1M?: number;
  /** Not recorded. */
  apiKey?: string;
  keyHeader?: 'bearer' | 'api-key';
  problem?: string;
}

/** One entry of the transcript kept in the run record (libs/contracts: the run page reads it). */
export type TranscriptEntry = AiTranscriptEntry;

/** A failed AI step: the transcript so far is its output; `status` / `retryAfter` (a model API's 429 or 5xx) and the cause stay readable for the retry policy. */
export class AiStepError extends NodeFailedError {
  override readonly name = 'AiStepError';
  readonly status?: number;
  readonly retryAfter?: string;
  constructor(
    message: string,
    output: unknown,
    cause: unknown,
    /** A repeat could call a tool again: one was in flight, or tools ran and the step has no saved sub-steps. */
    readonly toolsRan: boolean,
  ) {
    super(message, output);
    this.cause = cause;
    const c = cause as { status?: unknown; retryAfter?: unknown } | undefined;
    if (typeof c?.status === 'number') this.status = c.status;
    if (typeof c?.retryAfter === 'string') this.retryAfter = c.retryAfter;
  }
}

export const aiHandler: NodeHandler<AiParams, AiInput> = {
  isAction: true,
  usesSubSteps: true,
  render: (params, renderer) => renderAi(params, renderer),
  mask: ({ apiKey: _key, keyHeader: _header, problem: _problem, mcpServers, ...input }) => ({
    ...input,
    mcpServers: mcpServers.map(({ headers: _h, query: _q, ...s }) => ({ ...s, url: maskUrl(s.url) })),
  }),
  execute: (input, ctx) => executeAi(input, ctx),
  retrySafe: (_input, err) => !(err instanceof AiStepError && err.toolsRan),
};

export function renderAi(params: AiParams, renderer: TemplateRenderer): AiInput {
  const typed = renderer.typedCredential(params.credential, Object.keys(PROVIDER_OF));
  const provider = PROVIDER_OF[typed.type]!;
  const problems: string[] = [];
  const schema = orProblem(() => parseSchema(params.outputSchema));
  if (schema.problem) problems.push(schema.problem);
  const mcpServers: McpServerInput[] = [];
  for (const [i, row] of (params.mcpServers ?? []).entries()) {
    const url = renderer.renderString(row.url).trim();
    const server: McpServerInput = {
      url,
      tools: (row.tools ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      headers: {},
      query: {},
    };
    if (!/^https?:\/\//i.test(url)) problems.push(`MCP server ${i + 1}: the URL must be http(s)`);
    const name = row.credential?.trim();
    if (name) {
      server.credential = name;
      const cred = renderer.typedCredential(name, MCP_CREDENTIAL_TYPES);
      const auth = credentialHttpAuth(cred.type, cred.fields)!;
      server.headers = auth.headers;
      server.query = auth.query;
    }
    mcpServers.push(server);
  }
  const temperature = params.temperature;
  if (provider === 'anthropic' && temperature !== undefined && temperature > 1) problems.push('temperature: the Anthropic API takes 0 to 1');
  const input: AiInput = {
    provider,
    credential: params.credential,
    baseUrl: typed.fields.baseUrl ?? '',
    model: renderer.renderString(params.model).trim(),
    prompt: renderer.renderString(params.prompt),
    maxTokens: params.maxTokens ?? AI_LIMITS.defaultMaxTokens,
    flowdeskTools: params.flowdeskTools ?? 'none',
    mcpServers,
    maxToolCalls: params.maxToolCalls ?? AI_LIMITS.defaultMaxToolCalls,
    timeoutMs: params.timeoutMs ?? AI_LIMITS.defaultTimeoutMs,
  };
  if (params.system !== undefined && params.system.trim()) input.system = renderer.renderString(params.system);
  if (temperature !== undefined) input.temperature = temperature;
  if (params.inputPricePer1M !== undefined) input.inputPricePer1M = params.inputPricePer1M;
  if (params.outputPricePer1M !== undefined) input.outputPricePer1M = params.outputPricePer1M;
  if (schema.value) input.schema = schema.value;
  if (typed.fields.apiKey) input.apiKey = typed.fields.apiKey;
  if (typed.fields.keyHeader === 'api-key') input.keyHeader = 'api-key';
  if (!input.model) problems.push('model is empty: name the model');
  if (!input.prompt.trim()) problems.push('the user message is empty');
  for (const [what, text] of [
    ['the system message', input.system ?? ''],
    ['the user message', input.prompt],
  ] as const)
    if (text.length > AI_LIMITS.maxPromptChars) problems.push(`${what} is ${text.length} characters after rendering; at most ${AI_LIMITS.maxPromptChars}`);
  if (problems.length) input.problem = problems.join('; ');
  return input;
}

function parseSchema(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined || !text.trim()) return undefined;
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    throw new NodeFailedError('outputSchema is not valid JSON');
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) throw new NodeFailedError('outputSchema must be a JSON Schema object');
  return schema as Record<string, unknown>;
}

async function executeAi(input: AiInput, ctx: NodeContext): Promise<{ output: unknown }> {
  if (input.problem) throw new NodeFailedError(input.problem);
  const deadline = Date.now() + input.timeoutMs;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(new RequestTimeoutError(`the AI step ran longer than its limit of ${input.timeoutMs} ms`)), input.timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timer.signal]);
  const transcript: TranscriptEntry[] = [];
  if (input.system) transcript.push({ role: 'system', content: input.system });
  transcript.push({ role: 'user', content: input.prompt });
  const usage: AiUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let toolCalls = 0;
  let modelCalls = 0;
  let inTool = false;
  const connections = [];
  try {
    connections.push(...(await connectServers(input.mcpServers, ctx, deadline, signal)));
    const local = flowdeskTools(input.flowdeskTools);
    const remote = offeredTools(
      connections,
      local.map((t) => t.name),
    );
    const tools = [...local, ...remote];
    const byName = new Map<string, OfferedTool | LocalTool>(tools.map((t) => [t.name, t]));
    const turns: Turn[] = [{ role: 'user', content: input.prompt }];
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw timer.signal.reason ?? new RequestTimeoutError(`the AI step ran longer than its limit of ${input.timeoutMs} ms`);
      const modelKey = `m${++modelCalls}`;
      const saved = ctx.subSteps?.get(modelKey)?.value as ModelTurn | undefined;
      const turn =
        saved ??
        (await callModel(
          {
            provider: input.provider,
            baseUrl: input.baseUrl,
            ...(input.apiKey ? { apiKey: input.apiKey } : {}),
            ...(input.keyHeader ? { keyHeader: input.keyHeader } : {}),
            model: input.model,
            ...(input.system ? { system: input.system } : {}),
            turns,
            tools,
            ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
            maxTokens: input.maxTokens,
            ...(input.schema ? { schema: input.schema } : {}),
            timeoutMs: remaining,
          },
          { ...ctx, signal },
        ));
      if (!saved) await ctx.subSteps?.save(modelKey, turn);
      usage.inputTokens += turn.usage.inputTokens;
      usage.outputTokens += turn.usage.outputTokens;
      usage.totalTokens = usage.inputTokens + usage.outputTokens;
      transcript.push({
        role: 'assistant',
        content: turn.text,
        ...(turn.toolCalls.length
          ? { toolCalls: turn.toolCalls.map(({ id, name, arguments: a, badArguments }) => ({ id, name, arguments: badArguments ?? a })) }
          : {}),
        usage: turn.usage,
        finishReason: turn.finishReason,
      });
      turns.push({ role: 'assistant', content: turn.text, ...(turn.toolCalls.length ? { toolCalls: turn.toolCalls } : {}) });
      if (!turn.toolCalls.length) return { output: finish(input, turn, usage, toolCalls, transcript) };
      if (!tools.length || toolCalls + turn.toolCalls.length > input.maxToolCalls)
        throw new NodeFailedError(
          input.maxToolCalls === 0 || !tools.length
            ? `the model asked for a tool call, but the step offers ${tools.length ? 'none (max tool calls is 0)' : 'no tools'}`
            : `the model asked for more than ${input.maxToolCalls} tool calls (the step's max tool calls)`,
        );
      for (const call of turn.toolCalls) {
        const toolKey = `t${toolCalls + 1}`;
        let result = ctx.subSteps?.get(toolKey)?.value as { content: string; isError: boolean } | undefined;
        if (!result) {
          inTool = true;
          result = await runToolCall(call, byName, input.flowdeskTools, ctx, toolKey, deadline, signal);
          inTool = false;
          await ctx.subSteps?.save(toolKey, result);
        }
        toolCalls++;
        turns.push({ role: 'tool', toolCallId: call.id, name: call.name, content: result.content, ...(result.isError ? { isError: true } : {}) });
        transcript.push({ role: 'tool', toolCallId: call.id, name: call.name, content: result.content, ...(result.isError ? { isError: true } : {}) });
      }
    }
  } catch (err) {
    const reason = timer.signal.aborted && !ctx.signal.aborted ? (timer.signal.reason as Error) : err;
    const message = reason instanceof Error ? reason.message : String(reason);
    const earlier = reason instanceof NodeFailedError ? reason.output : null;
    const unsafe = inTool || (toolCalls > 0 && !ctx.subSteps);
    const cost = costOf(input, usage);
    const kept = boundTranscript(transcript);
    const output = {
      ...(earlier ? { error: earlier } : {}),
      usage,
      ...(cost ? { cost } : {}),
      toolCalls,
      transcript: kept.transcript,
      ...(kept.cut ? { transcriptCut: kept.cut } : {}),
    };
    throw new AiStepError(message, output, reason, unsafe);
  } finally {
    clearTimeout(timeout);
    await closeAll(connections);
  }
}

/** Executes one tool call; an unknown tool, arguments that are not JSON, or a tool's own error are fed back to the model as errors. */
async function runToolCall(
  call: ToolCall,
  byName: Map<string, OfferedTool | LocalTool>,
  mode: FlowdeskToolsMode,
  ctx: NodeContext,
  toolKey: string,
  deadline: number,
  signal: AbortSignal,
) {
  const tool = byName.get(call.name);
  if (!tool) {
    const flowdesk = FLOWDESK_TOOLS.find((t) => t.name === call.name);
    if (flowdesk?.write && mode === 'read') return { content: `Error: ${call.name} is not allowed: this step's Flowdesk tools are read-only`, isError: true };
    return { content: `Error: no tool named "${call.name}"`, isError: true };
  }
  if (call.badArguments !== undefined) return { content: 'Error: the arguments are not JSON', isError: true };
  const result =
    'run' in tool
      ? await runFlowdeskTool(tool, call.arguments, { ...ctx, signal }, ctx.idempotencyKey ? `${ctx.idempotencyKey}:${toolKey}` : undefined)
      : await callTool(tool, call.arguments, deadline, signal);
  if (result.content.length <= AI_LIMITS.maxToolResultChars) return result;
  return {
    ...result,
    content: `${result.content.slice(0, AI_LIMITS.maxToolResultChars)}\n[cut: the result was ${result.content.length} characters; at most ${AI_LIMITS.maxToolResultChars} are kept]`,
  };
}

function finish(input: AiInput, turn: ModelTurn, usage: AiUsage, toolCalls: number, transcript: TranscriptEntry[]): AiStepOutput {
  if (turn.text.length > AI_LIMITS.maxOutputChars)
    throw new NodeFailedError(`the model's answer is ${turn.text.length} characters; at most ${AI_LIMITS.maxOutputChars}`);
  const cost = costOf(input, usage);
  const kept = boundTranscript(transcript);
  const output: AiStepOutput = {
    text: turn.text,
    model: turn.model,
    finishReason: turn.finishReason,
    usage,
    ...(cost ? { cost } : {}),
    toolCalls,
    transcript: kept.transcript,
    ...(kept.cut ? { transcriptCut: kept.cut } : {}),
  };
  if (input.schema) output.json = structured(turn.text, input.schema, turn.finishReason);
  return output;
}

/** The step's cost from its prices per million tokens (a price not given counts as 0); none without prices. */
export function costOf(input: Pick<AiInput, 'inputPricePer1M' | 'outputPricePer1M'>, usage: AiUsage): AiCost | undefined {
  if (input.inputPricePer1M === undefined && input.outputPricePer1M === undefined) return undefined;
  const round = (x: number) => Math.round(x * 1e9) / 1e9;
  const inCost = (usage.inputTokens * (input.inputPricePer1M ?? 0)) / 1e6;
  const outCost = (usage.outputTokens * (input.outputPricePer1M ?? 0)) / 1e6;
  return { input: round(inCost), output: round(outCost), total: round(inCost + outCost) };
}

const cutNote = (length: number, kept: number) => `\n[cut: ${length} characters; the run record keeps ${kept} of it]`;

/**
 * The transcript as the run record keeps it, within AI_LIMITS.maxTranscriptChars: when its texts
 * (messages, tool results, tool-call arguments as JSON) are longer together, the longest ones are cut
 * to the same length, so that they fit, each with a note; shorter ones are kept whole. The
 * conversation the model sees is not changed.
 */
export function boundTranscript(entries: TranscriptEntry[], max: number = AI_LIMITS.maxTranscriptChars): { transcript: TranscriptEntry[]; cut: number } {
  // One tool call's arguments are kept up to a tool result's length.
  const argsCap = AI_LIMITS.maxToolResultChars;
  let cut = 0;
  const withArgs = entries.map((e): TranscriptEntry => {
    if (e.role !== 'assistant' || !e.toolCalls) return e;
    return {
      ...e,
      toolCalls: e.toolCalls.map((c) => {
        const text = JSON.stringify(c.arguments) ?? '';
        if (text.length <= argsCap) return c;
        cut++;
        return { ...c, arguments: `${text.slice(0, argsCap)}${cutNote(text.length, argsCap)}` };
      }),
    };
  });
  const size = (e: TranscriptEntry) =>
    e.content.length + (e.role === 'assistant' ? (e.toolCalls ?? []).reduce((n, c) => n + (JSON.stringify(c.arguments)?.length ?? 0), 0) : 0);
  const lengths = withArgs.map((e) => e.content.length);
  const fixed = withArgs.reduce((n, e) => n + size(e) - e.content.length, 0);
  const total = fixed + lengths.reduce((a, b) => a + b, 0);
  if (total <= max) return { transcript: withArgs, cut };
  // The most each text may keep (water-filling): the shorter ones whole, the rest cut to one length.
  let budget = Math.max(max - fixed, 0);
  let left = lengths.length;
  let share = 0;
  for (const len of [...lengths].sort((a, b) => a - b)) {
    share = Math.floor(budget / left);
    if (len > share) break;
    budget -= len;
    left--;
  }
  const keep = Math.max(share - 100, 0);
  return {
    transcript: withArgs.map((e) => {
      if (e.content.length <= share) return e;
      cut++;
      return { ...e, content: `${e.content.slice(0, keep)}${cutNote(e.content.length, keep)}` };
    }),
    cut,
  };
}

/** The answer parsed as JSON (a ```json fence around it tolerated) and validated against the schema; a NodeFailedError says where it is wrong. */
export function structured(text: string, schema: Record<string, unknown>, finishReason: string): unknown {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*\n?/i, '')
    .replace(/\n?```$/, '')
    .trim();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    const cut = finishReason === 'length' || finishReason === 'max_tokens' ? ' (the answer was cut at max tokens)' : '';
    throw new NodeFailedError(`the model's answer is not JSON${cut}, though the step asks for its output schema`, { text });
  }
  let errors: { keyword: string; instancePath: string; message: string }[];
  try {
    errors = Schema.Errors(schema as never, value)[1];
  } catch (err) {
    throw new NodeFailedError(`outputSchema is not a JSON Schema the engine can check: ${err instanceof Error ? err.message : String(err)}`);
  }
  // A property refused by additionalProperties: false is also reported as "schema is false" at its path; the first says it better.
  errors = errors.filter((e) => e.keyword !== 'boolean' || errors.length === 1);
  if (errors.length) {
    const where = errors
      .slice(0, 5)
      .map((e) => `${e.instancePath || '/'} ${e.message}`)
      .join('; ');
    throw new NodeFailedError(`the model's answer does not match the output schema: ${where}`, { text, json: value });
  }
  return value;
}
