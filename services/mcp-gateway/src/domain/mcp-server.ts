import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { withSpan } from '@flowdesk/telemetry';
import { PROMPTS, RESOURCES, RESOURCE_TEMPLATES, ToolArgumentError, allows, listedTools } from '@flowdesk/contracts';
import { UpstreamError, type CountToolCall, type WorkspaceApi } from './ports.ts';
import { TOOL_HANDLERS } from './tool-handlers.ts';
import { readResource, staticResource, UnknownResourceError } from './resources.ts';
import { PROMPT_RENDERERS, PromptArgumentError } from './prompts.ts';
import type { Principal } from './sessions.ts';
import { argumentValidators } from './arguments.ts';

/** MCP's code for an unknown resource URI (spec, server/resources). */
export const RESOURCE_NOT_FOUND = -32002;

export const SERVER_INFO = { name: 'flowdesk', title: 'Flowdesk', version: '1.0.0' };
const INSTRUCTIONS =
  'Flowdesk holds the user’s projects, tasks, calendar, notes and workflows. Start with get_workspace_overview or get_agenda; ' +
  'find things with search_workspace; ids come from list_* and search tools. Dates of tasks are YYYY-MM-DD; times are ISO 8601.';

// Computed once: the lists never change at run time, and input validators compile once per tool.
// What tools/list carries is sized for a model's context (listedTools: no output schemas).
const LISTED_TOOLS = listedTools();
const validatorFactory = new AjvJsonSchemaValidator();
// Our own Ajv for tool arguments: its messages name the field (`title is required`, `colour is not a
// known property`), and NUL or lone surrogates are refused by field before Postgres sees them.
const INPUT_VALIDATORS = argumentValidators([...TOOL_HANDLERS.values()].map(({ spec }) => [spec.name, spec.inputSchema]));

/** What one request's handlers work with. */
export interface CallContext {
  principal: Principal | undefined;
  /** workspace-api as the caller; resolved lazily (token exchange) on the first call that needs it. */
  api: () => Promise<WorkspaceApi>;
  now: () => Date;
  /** Counts each tools/call by its result (the metrics adapter). */
  countToolCall: CountToolCall;
}

// Compact JSON: the text block goes into the model's context, where indentation costs tokens (about a
// third more for a task list) and buys nothing a model needs; clients that want structure read
// structuredContent.
const asText = (value: unknown) => JSON.stringify(value);

/** The failure a model can act on; 5xx details stay out of the answer. */
function toolError(err: unknown): CallToolResult {
  const message =
    err instanceof UpstreamError
      ? err.status >= 500
        ? `Flowdesk could not complete the call (${err.code}); try again shortly.`
        : `${err.message} (${err.code})`
      : err instanceof Error && err.name === 'CredentialRejectedError'
        ? 'The credential is no longer valid; reconnect with a valid API key or OAuth token.'
        : 'Flowdesk could not complete the call; try again shortly.';
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/**
 * A low-level SDK Server for one HTTP request (the transport runs stateless; sessions are the
 * gateway's). Authentication and scopes are checked before the request gets here; the write check
 * below is a second line, should a path ever skip the HTTP one.
 */
export function buildMcpServer(ctx: CallContext, onError: (err: unknown) => void): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false }, prompts: { listChanged: false } },
    instructions: INSTRUCTIONS,
    // The module's one Ajv: left out, the SDK builds a fresh Ajv instance per Server, i.e. per request
    // (about a third of a millisecond each, the largest CPU cost of a call before this was shared).
    jsonSchemaValidator: validatorFactory,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: LISTED_TOOLS }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const { name } = req.params;
    const tool = TOOL_HANDLERS.get(name);
    if (!tool) {
      ctx.countToolCall(name, 'invalid_params');
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const args = req.params.arguments ?? {};
    const check = INPUT_VALIDATORS.get(name)!(args);
    if (!check.valid) {
      ctx.countToolCall(name, 'invalid_params');
      throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${check.message}`);
    }
    if (!allows(ctx.principal?.scope, tool.spec.access)) {
      ctx.countToolCall(name, 'forbidden');
      return { isError: true, content: [{ type: 'text', text: `${name} requires the mcp:${tool.spec.access} scope` }] };
    }
    // A span per call (its workspace-api request is its child, docs/observability.md).
    return withSpan(
      'mcp-gateway',
      `tools/call ${name}`,
      async () => {
        try {
          const result = await tool.handler(args, await ctx.api(), ctx.now());
          ctx.countToolCall(name, 'ok');
          return { content: [{ type: 'text', text: asText(result) }], structuredContent: result as Record<string, unknown> };
        } catch (err) {
          if (err instanceof ToolArgumentError) {
            ctx.countToolCall(name, 'invalid_params');
            throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${err.message}`);
          }
          if (!(err instanceof UpstreamError) || err.status >= 500) onError(err);
          ctx.countToolCall(name, 'tool_error');
          return toolError(err);
        }
      },
      { attributes: { 'flowdesk.mcp.tool': name } },
    );
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const { uri } = req.params;
    const fixed = staticResource(uri);
    if (fixed) return { contents: [{ uri, ...fixed }] };
    try {
      const data = await readResource(uri, await ctx.api(), ctx.now());
      return { contents: [{ uri, mimeType: 'application/json', text: asText(data) }] };
    } catch (err) {
      if (err instanceof UnknownResourceError || (err instanceof UpstreamError && err.status === 404)) {
        throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
      }
      onError(err);
      throw new McpError(ErrorCode.InternalError, 'Flowdesk could not read the resource; try again shortly');
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS.map((p) => ({ ...p, arguments: [...p.arguments] })) }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const { name } = req.params;
    const render = PROMPT_RENDERERS[name];
    if (!render) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    try {
      const rendered = await render(req.params.arguments ?? {}, await ctx.api(), ctx.now());
      return { description: rendered.description, messages: rendered.messages };
    } catch (err) {
      if (err instanceof PromptArgumentError) throw new McpError(ErrorCode.InvalidParams, err.message);
      if (err instanceof UpstreamError && err.status < 500) throw new McpError(ErrorCode.InvalidParams, `${err.message} (${err.code})`);
      onError(err);
      throw new McpError(ErrorCode.InternalError, 'Flowdesk could not render the prompt; try again shortly');
    }
  });

  return server;
}
