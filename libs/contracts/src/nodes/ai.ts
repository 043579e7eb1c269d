import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/**
 * Limits of an AI step (docs/workflow-engine.md, "AI step", and its "Limits" table): the prompt's
 * size, the tokens a model call may produce, the whole step's time, each model call's answer, the
 * tool calls of one step, the MCP servers and tools it may use, and what one tool result feeds back.
 */
export const AI_LIMITS = {
  maxPromptChars: 100_000,
  defaultMaxTokens: 1_024,
  maxTokens: 32_768,
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  /** One model call's HTTP answer; larger fails the step. */
  maxResponseBytes: 2 * 1024 * 1024,
  /** The answer text kept as the step's output; longer fails the step. */
  maxOutputChars: 200_000,
  defaultMaxToolCalls: 10,
  maxToolCalls: 50,
  maxMcpServers: 5,
  /** Tools offered to the model, all servers together (OpenAI takes at most 128). */
  maxTools: 128,
  /** One tool result as fed back to the model (and kept in the transcript); longer is cut with a note. */
  maxToolResultChars: 20_000,
  /** One MCP request's HTTP answer. */
  maxMcpResponseBytes: 1024 * 1024,
  maxSchemaChars: 20_000,
  /**
   * The transcript kept in the run record (its messages' and tool calls' text together); past it the
   * longest entries are cut, each with a note saying how long it was.
   */
  maxTranscriptChars: 1_000_000,
  /** A price per million tokens (inputPricePer1M, outputPricePer1M). */
  maxPricePer1M: 10_000,
} as const;

/**
 * The owner's Flowdesk tools each choice offers: the MCP gateway's tools of these names (their
 * descriptions and input schemas are the gateway's, libs/contracts/src/mcp/tools.ts), called as the
 * owner. Read: `read`; read and write: both lists.
 */
export const AI_FLOWDESK_TOOL_NAMES = {
  read: ['list_tasks', 'get_task', 'get_project'],
  write: ['create_task', 'update_task', 'complete_task'],
} as const;

/** One entry of an AI step's transcript (its output's `transcript`): what the run page shows. */
export type AiTranscriptEntry =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string;
      toolCalls?: { id: string; name: string; arguments: unknown }[];
      usage: { inputTokens: number; outputTokens: number };
      finishReason: string;
    }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/** The tokens of an AI step (all its model calls), and their cost when the step has prices. */
export interface AiUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}
export interface AiCost {
  input: number;
  output: number;
  total: number;
}

/** An AI step's output (a failed step's has `usage`, `toolCalls`, `transcript`, `cost?` and `error?`). */
export interface AiStepOutput {
  text: string;
  json?: unknown;
  model: string;
  finishReason: string;
  usage: AiUsage;
  /** In the prices' currency; only when the step has a price per 1M tokens. */
  cost?: AiCost;
  toolCalls: number;
  transcript: AiTranscriptEntry[];
  /** Entries the transcript cap cut (AI_LIMITS.maxTranscriptChars). */
  transcriptCut?: number;
}

/** The owner's own Flowdesk tools an AI step offers: none (default), the read ones (find_tasks, get_task, get_project), or those and the write ones (create_task, update_task). */
export const AI_FLOWDESK_TOOLS = ['none', 'read', 'read_write'] as const;

/** A remote MCP server the AI step offers the tools of (Streamable HTTP). */
const McpServerRef = Type.Object(
  {
    url: Templated(2_000),
    /** A bearer or header credential sent with every request to the server. */
    credential: Type.Optional(Type.String({ maxLength: 100 })),
    /** Comma-separated tool names offered; empty: all the server lists. */
    tools: Type.Optional(Type.String({ maxLength: 2_000 })),
  },
  { additionalProperties: false },
);

export const ai = defineNode({
  type: 'ai',
  action: true,
  label: 'AI step',
  description:
    "Asks a chat model (an openai_compatible or anthropic credential's API) with templated messages; optional JSON Schema output; the owner's Flowdesk tools and remote MCP servers' tools, called in a bounded loop; SSRF-guarded.",
  idPrefix: 'ai',
  icon: 'braces',
  color: 'violet',
  params: Type.Object(
    {
      /** An openai_compatible (Chat Completions) or anthropic (Messages) credential: its type chooses the API. */
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      model: Templated(200),
      system: Type.Optional(Templated(AI_LIMITS.maxPromptChars)),
      prompt: Templated(AI_LIMITS.maxPromptChars),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: AI_LIMITS.maxTokens })),
      /** A JSON Schema (JSON text) the answer must be JSON of; validated. */
      outputSchema: Type.Optional(Type.String({ maxLength: AI_LIMITS.maxSchemaChars })),
      flowdeskTools: Type.Optional(StringEnum(AI_FLOWDESK_TOOLS)),
      mcpServers: Type.Optional(Type.Array(McpServerRef, { maxItems: AI_LIMITS.maxMcpServers })),
      maxToolCalls: Type.Optional(Type.Integer({ minimum: 0, maximum: AI_LIMITS.maxToolCalls })),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 1_000, maximum: AI_LIMITS.maxTimeoutMs })),
      /** What the model's provider charges per million input (prompt) and output (completion) tokens: the step's cost is worked out from them. */
      inputPricePer1M: Type.Optional(Type.Number({ minimum: 0, maximum: AI_LIMITS.maxPricePer1M })),
      outputPricePer1M: Type.Optional(Type.Number({ minimum: 0, maximum: AI_LIMITS.maxPricePer1M })),
    },
    { additionalProperties: false },
  ),
  fields: {
    credential: {
      label: 'Credential',
      placeholder: 'openai',
      trim: true,
      description: 'A credential (Settings → Credentials) of type OpenAI-compatible model API or Anthropic API: its type chooses the API.',
    },
    model: { label: 'Model', template: true, trim: true, placeholder: 'gpt-4o-mini, claude-sonnet-4-5, llama3.2' },
    system: { label: 'System message', template: true, multiline: true, placeholder: 'You triage support requests.' },
    prompt: { label: 'User message', template: true, multiline: true, placeholder: 'Classify: {{trigger.body.text}}' },
    temperature: { label: 'Temperature', widget: 'json', placeholder: '0.2', description: '0–2; absent: the model’s default.' },
    maxTokens: {
      label: 'Max tokens',
      widget: 'json',
      placeholder: String(AI_LIMITS.defaultMaxTokens),
      description: `Per model call, at most ${AI_LIMITS.maxTokens} (default ${AI_LIMITS.defaultMaxTokens}).`,
    },
    outputSchema: {
      label: 'Output JSON Schema',
      multiline: true,
      placeholder: '{ "type": "object", "properties": { "priority": { "enum": ["low", "high"] } }, "required": ["priority"] }',
      description: 'Optional: the answer must be JSON valid against it ({{nodes.<id>.json}}); an answer that is not fails the step.',
    },
    flowdeskTools: {
      label: 'Flowdesk tools',
      default: 'none',
      options: [
        { value: 'none', label: 'None' },
        { value: 'read', label: 'Read (find and read tasks and projects)' },
        { value: 'read_write', label: 'Read and write (also create and update tasks)' },
      ],
      description: `Your own tasks and projects, called as you (the MCP server's tools): ${AI_FLOWDESK_TOOL_NAMES.read.join(', ')}; with write, ${AI_FLOWDESK_TOOL_NAMES.write.join(', ')} too.`,
    },
    mcpServers: {
      label: 'MCP servers (tools)',
      widget: 'rows',
      noun: 'server',
      description: `Up to ${AI_LIMITS.maxMcpServers} remote MCP servers (Streamable HTTP); their tools are offered to the model and called for it.`,
      columns: {
        url: { label: 'URL', template: true, outboundUrl: true, placeholder: 'https://mcp.example.com/mcp' },
        credential: { label: 'Credential', trim: true, placeholder: 'bearer or header credential' },
        tools: { label: 'Tools', placeholder: 'all (or: search, fetch)' },
      },
    },
    maxToolCalls: {
      label: 'Max tool calls',
      widget: 'json',
      placeholder: String(AI_LIMITS.defaultMaxToolCalls),
      description: `In the whole step, at most ${AI_LIMITS.maxToolCalls} (default ${AI_LIMITS.defaultMaxToolCalls}); more fails the step.`,
    },
    timeoutMs: {
      label: 'Timeout (ms)',
      widget: 'json',
      placeholder: String(AI_LIMITS.defaultTimeoutMs),
      description: `The whole step, model and tool calls together; at most ${AI_LIMITS.maxTimeoutMs}.`,
    },
    inputPricePer1M: {
      label: 'Price per 1M input tokens',
      widget: 'json',
      placeholder: '0.15',
      description: 'Optional: what the provider charges per million input tokens (e.g. in USD); with the output price, the run shows the step’s cost.',
    },
    outputPricePer1M: {
      label: 'Price per 1M output tokens',
      widget: 'json',
      placeholder: '0.60',
      description: 'Optional: the price per million output tokens, in the same currency.',
    },
  },
  output:
    '`{ text, json?, model, finishReason, usage: { inputTokens, outputTokens, totalTokens }, cost?: { input, output, total }, toolCalls, transcript }`: `json` (structured output) is the answer parsed and validated against the schema; `cost` when the step has prices per 1M tokens; `transcript` holds the messages, tool calls and tokens of each model call.',
  summary: (p) => `${p.model || '(no model yet)'}: ${p.prompt || '…'}`,
});
