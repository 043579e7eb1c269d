import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
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

/**
 * Flowdesk's mark (the console's favicon) as a data: URI, so it needs no second request and no
 * public route (MCP 2025-11-25 icons). On the server, every resource, template and prompt; not on
 * tools: 52 copies would not fit tools/list's 10,000-token budget (docs/mcp-gateway.md, "Protocol version").
 */
const FLOWDESK_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#4c6ef5"/><path d="M9 10h14M9 16h10M9 22h6" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>';
export const FLOWDESK_ICONS = [{ src: `data:image/svg+xml;base64,${Buffer.from(FLOWDESK_SVG).toString('base64')}`, mimeType: 'image/svg+xml', sizes: ['any'] }];

export const SERVER_INFO = { name: 'flowdesk', title: 'Flowdesk', version: '1.0.0', icons: FLOWDESK_ICONS };
const INSTRUCTIONS =
  'Flowdesk holds the user’s projects, tasks, calendar, notes and workflows. Start with get_workspace_overview or get_agenda; ' +
  'find things with search_workspace; ids come from list_* and search tools. Dates of tasks are YYYY-MM-DD; times are ISO 8601.';

// Computed once: the lists never change at run time, and input validators compile once per tool.
// What tools/list carries is sized for a model's context (listedTools: no output schemas), with each
// tool's icon under the public base URL: one listing per base URL (one per deployment).
const listings = new Map<string, ReturnType<typeof listedTools>>();
function listingFor(publicBaseUrl: string): ReturnType<typeof listedTools> {
  let tools = listings.get(publicBaseUrl);
  if (!tools) listings.set(publicBaseUrl, (tools = listedTools(undefined, { iconBaseUrl: publicBaseUrl })));
  return tools;
}
const LISTED_RESOURCES = RESOURCES.map((r) => ({ ...r, icons: FLOWDESK_ICONS }));
const LISTED_RESOURCE_TEMPLATES = RESOURCE_TEMPLATES.map((r) => ({ ...r, icons: FLOWDESK_ICONS }));
const LISTED_PROMPTS = PROMPTS.map((p) => ({ ...p, arguments: [...p.arguments], icons: FLOWDESK_ICONS }));
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
  /** The request's MCP revision (its session's negotiated one; 2026-07-28 on that path): from 2025-11-25 on, invalid tool arguments are a tool error. */
  protocolVersion: string;
  /** Counts each tools/call by its result (the metrics adapter). */
  countToolCall: CountToolCall;
  /** The public base URL: tools' icons are served under it (the console's /icons/<kind>.svg). */
  publicBaseUrl: string;
}

/** MCP 2025-11-25 (SEP-1303): input validation errors are tool execution errors (isError), which a model can correct. */
const TOOL_ERRORS_FOR_INVALID_ARGUMENTS_FROM = '2025-11-25';

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

/** A JSON-RPC error a handler answers; both SDK servers send its code, message and data as they are. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const SERVER_CAPABILITIES = {
  tools: { listChanged: false },
  resources: { listChanged: false, subscribe: false },
  prompts: { listChanged: false },
};
export { INSTRUCTIONS as SERVER_INSTRUCTIONS };

type ToolCallParams = { name: string; arguments?: Record<string, unknown> };
type NamedParams = { name: string; arguments?: Record<string, string> };

/**
 * The catalogue's handlers for one request, independent of the SDK that serves them: the sessionful
 * 2025 path binds them to the SDK 1.x `Server` (buildMcpServer), the 2026-07-28 path to the SDK 2.x
 * `Server` (mcp-server-modern.ts). Errors are RpcError; tool failures are isError results.
 */
export function mcpHandlers(ctx: CallContext, onError: (err: unknown) => void) {
  return {
    listTools: () => ({ tools: listingFor(ctx.publicBaseUrl) }),
    callTool: async ({ name, arguments: given }: ToolCallParams): Promise<CallToolResult> => {
      const tool = TOOL_HANDLERS.get(name);
      if (!tool) {
        ctx.countToolCall(name, 'invalid_params');
        throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      const args = given ?? {};
      const invalidArguments = (message: string): CallToolResult => {
        ctx.countToolCall(name, 'invalid_params');
        const text = `Invalid arguments for tool ${name}: ${message}`;
        if (ctx.protocolVersion >= TOOL_ERRORS_FOR_INVALID_ARGUMENTS_FROM) return { isError: true, content: [{ type: 'text', text }] };
        throw new RpcError(ErrorCode.InvalidParams, text);
      };
      const check = INPUT_VALIDATORS.get(name)!(args);
      if (!check.valid) return invalidArguments(check.message);
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
            if (err instanceof ToolArgumentError) return invalidArguments(err.message);
            if (!(err instanceof UpstreamError) || err.status >= 500) onError(err);
            ctx.countToolCall(name, 'tool_error');
            return toolError(err);
          }
        },
        { attributes: { 'flowdesk.mcp.tool': name } },
      );
    },
    listResources: () => ({ resources: LISTED_RESOURCES }),
    listResourceTemplates: () => ({ resourceTemplates: LISTED_RESOURCE_TEMPLATES }),
    readResource: async ({ uri }: { uri: string }) => {
      // The same for every caller (the node catalogue): no workspace-api call.
      const fixed = staticResource(uri);
      if (fixed) return { contents: [{ uri, ...fixed }] };
      try {
        const data = await readResource(uri, await ctx.api(), ctx.now());
        return { contents: [{ uri, mimeType: 'application/json', text: asText(data) }] };
      } catch (err) {
        if (err instanceof UnknownResourceError || (err instanceof UpstreamError && err.status === 404)) {
          throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
        }
        onError(err);
        throw new RpcError(ErrorCode.InternalError, 'Flowdesk could not read the resource; try again shortly');
      }
    },
    listPrompts: () => ({ prompts: LISTED_PROMPTS }),
    getPrompt: async ({ name, arguments: given }: NamedParams) => {
      const render = PROMPT_RENDERERS[name];
      if (!render) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      try {
        const rendered = await render(given ?? {}, await ctx.api(), ctx.now());
        return { description: rendered.description, messages: rendered.messages };
      } catch (err) {
        if (err instanceof PromptArgumentError) throw new RpcError(ErrorCode.InvalidParams, err.message);
        if (err instanceof UpstreamError && err.status < 500) throw new RpcError(ErrorCode.InvalidParams, `${err.message} (${err.code})`);
        onError(err);
        throw new RpcError(ErrorCode.InternalError, 'Flowdesk could not render the prompt; try again shortly');
      }
    },
  };
}

/**
 * A low-level SDK 1.x Server for one HTTP request of the sessionful path (the transport runs
 * stateless; sessions are the gateway's). Authentication and scopes are checked before the request
 * gets here; the write check in callTool is a second line, should a path ever skip the HTTP one.
 */
export function buildMcpServer(ctx: CallContext, onError: (err: unknown) => void): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: INSTRUCTIONS,
    // The module's one Ajv: left out, the SDK builds a fresh Ajv instance per Server, i.e. per request
    // (about a third of a millisecond each, the largest CPU cost of a call before this was shared).
    jsonSchemaValidator: validatorFactory,
  });
  const h = mcpHandlers(ctx, onError);
  server.setRequestHandler(ListToolsRequestSchema, h.listTools);
  server.setRequestHandler(CallToolRequestSchema, (req) => h.callTool(req.params));
  server.setRequestHandler(ListResourcesRequestSchema, h.listResources);
  server.setRequestHandler(ListResourceTemplatesRequestSchema, h.listResourceTemplates);
  server.setRequestHandler(ReadResourceRequestSchema, (req) => h.readResource(req.params));
  server.setRequestHandler(ListPromptsRequestSchema, h.listPrompts);
  server.setRequestHandler(GetPromptRequestSchema, (req) => h.getPrompt(req.params));
  return server;
}
