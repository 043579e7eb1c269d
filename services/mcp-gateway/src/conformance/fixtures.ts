import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type GetPromptResult,
  type LoggingLevel,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_NOT_FOUND } from '../domain/mcp-server.ts';
import type { ResponseRelay } from './relay.ts';

// The scenario fixtures of @modelcontextprotocol/conformance (`conformance list --server`): names,
// arguments and answers are the ones each scenario's description asks for.

/** A 1×1 red PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** 10 ms of 8 kHz 8-bit mono silence in a RIFF/WAVE container (the scenario checks audio/wav). */
function silentWav(): string {
  const samples = 80;
  const b = Buffer.alloc(44 + samples, 0x80);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + samples, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(8000, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(samples, 40);
  return b.toString('base64');
}
const WAV_BASE64 = silentWav();

const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;

const noArgs = { type: 'object' as const, properties: {} };
const TOOLS = [
  { name: 'test_simple_text', description: 'Returns a simple text response', inputSchema: noArgs },
  { name: 'test_image_content', description: 'Returns an image (1x1 PNG)', inputSchema: noArgs },
  { name: 'test_audio_content', description: 'Returns audio (WAV)', inputSchema: noArgs },
  { name: 'test_embedded_resource', description: 'Returns an embedded text resource', inputSchema: noArgs },
  { name: 'test_multiple_content_types', description: 'Returns text, an image and an embedded resource', inputSchema: noArgs },
  { name: 'test_tool_with_logging', description: 'Sends three log notifications while it runs', inputSchema: noArgs },
  { name: 'test_error_handling', description: 'Always fails with isError: true', inputSchema: noArgs },
  { name: 'test_reconnection', description: 'Closes its SSE stream mid-call; the answer comes on the reconnection (SEP-1699)', inputSchema: noArgs },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100 of 100 while it runs', inputSchema: noArgs },
  {
    name: 'test_sampling',
    description: 'Asks the client to sample an LLM completion for the prompt',
    inputSchema: { type: 'object' as const, properties: { prompt: { type: 'string', description: 'The prompt to send' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user (through the client) for a username and an email',
    inputSchema: { type: 'object' as const, properties: { message: { type: 'string', description: 'What to ask the user' } }, required: ['message'] },
  },
  { name: 'test_elicitation_sep1034_defaults', description: 'Asks the user for a form whose fields carry default values (SEP-1034)', inputSchema: noArgs },
  { name: 'test_elicitation_sep1330_enums', description: 'Asks the user for a form with every kind of enum field (SEP-1330)', inputSchema: noArgs },
  {
    // json-schema-2020-12: the listing keeps every 2020-12 keyword as written (SEP-1613, SEP-2106).
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object' as const,
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  },
];

/** The forms of the 2025-11-25 elicitation scenarios (SEP-1034 defaults, SEP-1330 enums), as each scenario checks them. */
const ELICITATION_FORMS: Record<string, { message: string; requestedSchema: { type: 'object'; properties: Record<string, object> } }> = {
  test_elicitation_sep1034_defaults: {
    message: 'Please review and update the form fields with defaults',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
    },
  },
  test_elicitation_sep1330_enums: {
    message: 'Please select options from the enum fields',
    requestedSchema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          description: 'Select one option with titles',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Select one option (legacy)',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Select multiple options',
          minItems: 1,
          maxItems: 3,
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Select multiple options with titles',
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    },
  },
};

const RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static text', description: 'A static text resource', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static binary', description: 'A static PNG image', mimeType: 'image/png' },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched resource',
    description: 'A resource clients may subscribe to',
    mimeType: 'text/plain',
  },
];
const RESOURCE_TEMPLATES = [
  { uriTemplate: 'test://template/{id}/data', name: 'template-data', title: 'Data by id', description: 'JSON data for an id', mimeType: 'application/json' },
];

const PROMPTS = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with an image' },
];

/** Completion candidates per prompt argument and template variable. */
const COMPLETIONS: Record<string, readonly string[]> = {
  arg1: ['paris', 'park', 'party', 'test', 'testing', 'testValue1'],
  arg2: ['world', 'word', 'testValue2'],
  resourceUri: ['test://static-text', 'test://static-binary', 'test://watched-resource'],
  id: ['1', '123', '456'],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

function requireString(args: Record<string, unknown>, name: string, where: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${where}: ${name} must be a string`);
  return v;
}

/**
 * What outlives one request of a session. The transport runs one Server per request, so a session's
 * log level and subscriptions live here, keyed by the session id, in this process only: conformance
 * mode is one loopback process by construction.
 */
export class FixtureState {
  readonly logLevels = new Map<string, LoggingLevel>();
  readonly subscriptions = new Map<string, Set<string>>();
  constructor(readonly relay: ResponseRelay) {}
  /** Drops what a session left behind (DELETE). */
  forget(sessionId: string) {
    this.logLevels.delete(sessionId);
    this.subscriptions.delete(sessionId);
  }
}

/**
 * An SDK Server whose transport is registered with the relay while it lives, so a client's answer
 * to a request it sent (sampling, elicitation) — which arrives on a later POST — reaches it.
 */
class FixtureServer extends Server {
  constructor(
    private readonly relay: ResponseRelay,
    private readonly sessionId: string,
    ...args: ConstructorParameters<typeof Server>
  ) {
    super(...args);
  }
  override async connect(transport: Transport): Promise<void> {
    const untrack = this.relay.track(this.sessionId, transport);
    const onclose = this.onclose;
    this.onclose = () => {
      untrack();
      onclose?.();
    };
    await super.connect(transport);
  }
}

/** The conformance catalogue as a Server for one request of `sessionId`. */
export function buildFixtureServer(state: FixtureState, sessionId: string, onError: (err: unknown) => void): Server {
  const server = new FixtureServer(
    state.relay,
    sessionId,
    { name: 'flowdesk-conformance', title: 'Flowdesk (conformance mode)', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { listChanged: false, subscribe: true },
        prompts: { listChanged: false },
        logging: {},
        completions: {},
      },
      instructions: 'Conformance fixtures of the MCP conformance suite; no Flowdesk data is reachable here.',
    },
  );
  server.onerror = onError;

  /** A log notification on this request's stream, unless the session's level filters it out. */
  const log = (
    send: (n: { method: 'notifications/message'; params: { level: LoggingLevel; logger: string; data: unknown } }) => Promise<void>,
    level: LoggingLevel,
    data: string,
  ) => {
    const min = state.logLevels.get(sessionId);
    if (min && LEVELS.indexOf(level) < LEVELS.indexOf(min)) return Promise.resolve();
    return send({ method: 'notifications/message', params: { level, logger: 'conformance', data } });
  };

  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    state.logLevels.set(sessionId, req.params.level);
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'test_simple_text':
        return text('This is a simple text response for testing.');
      case 'test_image_content':
        return { content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return {
          content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
        };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) },
            },
          ],
        };
      case 'test_tool_with_logging':
        await log(extra.sendNotification, 'info', 'Tool execution started');
        await sleep(50);
        await log(extra.sendNotification, 'info', 'Tool processing data');
        await sleep(50);
        await log(extra.sendNotification, 'info', 'Tool execution completed');
        return text('Tool with logging executed successfully');
      case 'test_reconnection':
        // SSE polling: the stream closes before the answer, which is stored and replayed on the
        // client's GET with Last-Event-ID (routes/mcp.ts getStream).
        extra.closeSSEStream?.();
        await sleep(100);
        return text('Reconnection test completed');
      case 'test_error_handling':
        return { isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] };
      case 'test_tool_with_progress': {
        const progressToken = extra._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
          if (progress < 100) await sleep(50);
        }
        return text(`Progress tool completed (token ${progressToken === undefined ? 'none' : String(progressToken)})`);
      }
      case 'test_sampling': {
        const prompt = requireString(args, 'prompt', 'tool test_sampling');
        const answer = await extra.sendRequest(
          { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 } },
          CreateMessageResultSchema,
        );
        // The SDK's schema types a sampling result's content loosely (one block or, newer, a list).
        const content = (Array.isArray(answer.content) ? answer.content[0] : answer.content) as { type?: string; text?: string } | undefined;
        return text(`LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`);
      }
      case 'test_elicitation': {
        const message = requireString(args, 'message', 'tool test_elicitation');
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              message,
              requestedSchema: {
                type: 'object',
                properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
                required: ['username', 'email'],
              },
            },
          },
          ElicitResultSchema,
        );
        return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case 'test_elicitation_sep1034_defaults':
      case 'test_elicitation_sep1330_enums': {
        const answer = await extra.sendRequest({ method: 'elicitation/create', params: ELICITATION_FORMS[req.params.name]! }, ElicitResultSchema);
        return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case 'json_schema_2020_12_tool':
        return text(`Received: ${JSON.stringify(args)}`);
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req): Promise<ReadResourceResult> => {
    const { uri } = req.params;
    switch (uri) {
      case 'test://static-text':
        return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
      case 'test://static-binary':
        return { contents: [{ uri, mimeType: 'image/png', blob: PNG_BASE64 }] };
      case 'test://watched-resource':
        return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content.' }] };
    }
    const match = TEMPLATE.exec(uri);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    }
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
  });
  const knownResource = (uri: string) => RESOURCES.some((r) => r.uri === uri) || TEMPLATE.test(uri);
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    if (!knownResource(req.params.uri)) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
    let set = state.subscriptions.get(sessionId);
    if (!set) state.subscriptions.set(sessionId, (set = new Set()));
    set.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    state.subscriptions.get(sessionId)?.delete(req.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (req): Promise<GetPromptResult> => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    switch (req.params.name) {
      case 'test_simple_prompt':
        return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
      case 'test_prompt_with_arguments': {
        const arg1 = requireString(args, 'arg1', 'prompt test_prompt_with_arguments');
        const arg2 = requireString(args, 'arg2', 'prompt test_prompt_with_arguments');
        return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] };
      }
      case 'test_prompt_with_embedded_resource': {
        const uri = requireString(args, 'resourceUri', 'prompt test_prompt_with_embedded_resource');
        return {
          messages: [
            { role: 'user', content: { type: 'resource', resource: { uri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        };
      }
      case 'test_prompt_with_image':
        return {
          messages: [
            { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
          ],
        };
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
    }
  });

  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const { ref, argument } = req.params;
    const known =
      ref.type === 'ref/prompt'
        ? PROMPTS.find((p) => p.name === ref.name)?.arguments?.some((a) => a.name === argument.name)
        : RESOURCE_TEMPLATES.some((t) => t.uriTemplate === ref.uri) && argument.name === 'id';
    const prefix = argument.value.toLowerCase();
    const values = known ? (COMPLETIONS[argument.name] ?? []).filter((v) => v.toLowerCase().startsWith(prefix)) : [];
    return { completion: { values, total: values.length, hasMore: false } };
  });

  return server;
}
