/**
 * AI step (docs/workflow-engine.md, "AI step") against stand-ins started here on loopback: an
 * OpenAI-compatible Chat Completions server and an Anthropic Messages server that check the request as
 * the APIs document it (path, key header, JSON body, messages, tools) and script their answers by the
 * model's name (a tool call then an answer, JSON for structured output, a 429 with Retry-After, a
 * model that never stops calling tools), and a real MCP server (the SDK's McpServer over Streamable
 * HTTP, behind a bearer token) whose tool must be called with the scripted arguments. Runs go through
 * the executor with the guarded HTTP client (loopback allowed, as in HTTP Request's tests) and its
 * retry policy; the keys never appear in what a run records.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { TOOLS, type WorkflowNode } from '@flowdesk/contracts';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import { checkpointKey, executeWorkflow, type ExecuteWorkflowInput, type StepCheckpoint } from '../src/domain/executor.ts';
import { boundTranscript, type TranscriptEntry } from '../src/domain/nodes/ai.ts';
import type { CredentialValue } from '../src/domain/ports.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { fixedEvent, json, silentLog, startServer, type Received, type TestServer } from './support.ts';

const OPENAI_KEY = 'sk-test-OpEnAiKeY';
const ANTHROPIC_KEY = 'sk-ant-test-AnThRoPiCkEy';
const MCP_TOKEN = 'mcp-SeCrEtBeArEr';

let openai: TestServer;
let anthropic: TestServer;
let mcp: { url: string; calls: { orderId: string }[]; requests: number; close(): Promise<void> };
let client: GuardedHttpClient;

type ChatMessage = { role: string; content: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

/** What the Chat Completions stand-in refuses (400, in OpenAI's error shape). */
function openaiWrong(req: Received, body: { model?: unknown; messages?: unknown }): string | null {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return `${req.method} ${req.url}`;
  if (!String(req.headers['content-type']).startsWith('application/json')) return 'content-type';
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return 'model and messages are required';
  return null;
}

const completion = (model: string, message: Record<string, unknown>, finish: string, usage = { prompt_tokens: 10, completion_tokens: 5 }) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model,
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
});

before(async () => {
  openai = await startServer((req, res) => {
    let body: { model?: string; messages?: ChatMessage[]; tools?: unknown[]; response_format?: unknown; max_tokens?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return json(res, 400, { error: { message: 'not JSON', type: 'invalid_request_error' } });
    }
    const wrong = openaiWrong(req, body);
    if (wrong) return json(res, 400, { error: { message: wrong, type: 'invalid_request_error' } });
    const model = body.model!;
    // Azure OpenAI's key header, or a Bearer key.
    const keyOk =
      model === 'azure' ? req.headers['api-key'] === OPENAI_KEY && !req.headers.authorization : req.headers.authorization === `Bearer ${OPENAI_KEY}`;
    if (!keyOk) return json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const messages = body.messages!;
    const last = messages[messages.length - 1]!;
    if (model === 'tooling') {
      if (last.role !== 'tool')
        return json(
          res,
          200,
          completion(
            model,
            { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"A-17"}' } }] },
            'tool_calls',
          ),
        );
      const called = messages.find((m) => m.tool_calls)?.tool_calls?.[0];
      if (last.tool_call_id !== called?.id) return json(res, 400, { error: { message: 'tool_call_id does not answer the call' } });
      return json(res, 200, completion(model, { content: `Done: ${String(last.content)}` }, 'stop', { prompt_tokens: 30, completion_tokens: 7 }));
    }
    if (model === 'tool-then-busy') {
      if (messages.length === 1)
        return json(
          res,
          200,
          completion(
            model,
            { content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"R-1"}' } }] },
            'tool_calls',
          ),
        );
      const answers = openai.received.filter((r) => r.body.includes('"tool-then-busy"') && r.body.includes('call_9')).length;
      if (answers === 1) return json(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '1' });
      return json(res, 200, completion(model, { content: `Done: ${String(last.content)}` }, 'stop'));
    }
    if (model === 'agent') {
      // create_task, then the MCP server's lookup_order, then the answer.
      const results = messages.filter((m) => m.role === 'tool');
      if (results.length === 0)
        return json(
          res,
          200,
          completion(
            model,
            {
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'create_task', arguments: '{"title":"Fix the outage","priority":"high"}' } }],
            },
            'tool_calls',
          ),
        );
      if (results.length === 1)
        return json(
          res,
          200,
          completion(
            model,
            { content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"Z-9"}' } }] },
            'tool_calls',
          ),
        );
      return json(res, 200, completion(model, { content: results.map((m) => String(m.content)).join(' | ') }, 'stop'));
    }
    if (model === 'reader') {
      if (last.role !== 'tool')
        return json(
          res,
          200,
          completion(
            model,
            {
              content: null,
              tool_calls: [
                { id: 'r1', type: 'function', function: { name: 'list_tasks', arguments: '{"q":"outage","status":["todo"]}' } },
                { id: 'r2', type: 'function', function: { name: 'create_task', arguments: '{"title":"Sneaky"}' } },
              ],
            },
            'tool_calls',
          ),
        );
      return json(
        res,
        200,
        completion(
          model,
          {
            content: messages
              .filter((m) => m.role === 'tool')
              .map((m) => String(m.content))
              .join(' | '),
          },
          'stop',
        ),
      );
    }
    if (model === 'bad-args') {
      if (last.role !== 'tool')
        return json(
          res,
          200,
          completion(
            model,
            { content: null, tool_calls: [{ id: 'b1', type: 'function', function: { name: 'create_task', arguments: '{"priority":"extreme"}' } }] },
            'tool_calls',
          ),
        );
      return json(res, 200, completion(model, { content: String(last.content) }, 'stop'));
    }
    if (model === 'loop')
      return json(
        res,
        200,
        completion(
          model,
          {
            content: null,
            tool_calls: [{ id: `call_${messages.length}`, type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"L"}' } }],
          },
          'tool_calls',
        ),
      );
    if (model === 'json-good' || model === 'azure') return json(res, 200, completion(model, { content: '{"priority":"high","reason":"outage"}' }, 'stop'));
    if (model === 'json-bad') return json(res, 200, completion(model, { content: '{"priority":"urgent"}' }, 'stop'));
    if (model === 'busy') {
      const seen = openai.received.filter((r) => r.body.includes('"busy"')).length;
      if (seen === 1) return json(res, 429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after': '2' });
      return json(res, 200, completion(model, { content: 'after the wait' }, 'stop'));
    }
    if (model === 'down') return json(res, 503, { error: { message: 'overloaded' } });
    return json(res, 200, completion(model, { content: 'plain answer' }, 'stop'));
  });

  anthropic = await startServer((req, res) => {
    const body = JSON.parse(req.body) as {
      model?: string;
      max_tokens?: unknown;
      system?: string;
      messages?: { role: string; content: { type: string; text?: string; tool_use_id?: string; content?: string; id?: string }[] }[];
      tools?: { name: string; input_schema: unknown }[];
    };
    if (req.url !== '/v1/messages' || req.method !== 'POST') return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
    if (req.headers['x-api-key'] !== ANTHROPIC_KEY)
      return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    if (req.headers['anthropic-version'] !== '2023-06-01' || typeof body.max_tokens !== 'number' || !Array.isArray(body.messages))
      return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version, max_tokens and messages are required' } });
    // Roles alternate, starting with user.
    if (body.messages.some((m, i) => m.role !== (i % 2 === 0 ? 'user' : 'assistant')))
      return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'roles must alternate' } });
    const last = body.messages[body.messages.length - 1]!;
    const result = last.content.find((b) => b.type === 'tool_result');
    const usage = { input_tokens: 12, output_tokens: 6 };
    if (!result) {
      if (!body.tools?.some((t) => t.name === 'lookup_order'))
        return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'no tool' } });
      return json(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: { orderId: 'B-2' } },
        ],
        stop_reason: 'tool_use',
        usage,
      });
    }
    if (result.tool_use_id !== 'toolu_1') return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'unknown tool_use_id' } });
    json(res, 200, {
      id: 'msg_2',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [{ type: 'text', text: `Anthropic says: ${result.content}` }],
      stop_reason: 'end_turn',
      usage,
    });
  });

  // A real MCP server: the SDK's McpServer over Streamable HTTP (stateless: one server and transport per request), behind a bearer token.
  const calls: { orderId: string }[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (req.headers.authorization !== `Bearer ${MCP_TOKEN}`)
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const mcpServer = new McpServer({ name: 'orders', version: '1.0.0' });
        mcpServer.registerTool('lookup_order', { description: 'Looks an order up by its id.', inputSchema: { orderId: z.string() } }, async ({ orderId }) => {
          calls.push({ orderId });
          return { content: [{ type: 'text', text: `order ${orderId} is shipped` }] };
        });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close());
        await mcpServer.connect(transport);
        const raw = Buffer.concat(chunks).toString();
        await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mcp = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    calls,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  client = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
});

after(async () => {
  await client.close();
  await openai.close();
  await anthropic.close();
  await mcp.close();
});

const credentials = (): Map<string, CredentialValue> =>
  new Map<string, CredentialValue>([
    ['openai', { type: 'openai_compatible', fields: { baseUrl: `${openai.url}/v1`, apiKey: OPENAI_KEY, keyHeader: 'bearer' } }],
    ['azure', { type: 'openai_compatible', fields: { baseUrl: `${openai.url}/v1/`, apiKey: OPENAI_KEY, keyHeader: 'api-key' } }],
    ['claude', { type: 'anthropic', fields: { apiKey: ANTHROPIC_KEY, baseUrl: anthropic.url } }],
    ['mcp_token', { type: 'bearer', fields: { token: MCP_TOKEN } }],
    ['slack_bot', { type: 'slack_bot', fields: { token: 'xoxb-1-2' } }],
  ]);

let seq = 0;
async function run(params: Record<string, unknown>, more: Partial<WorkflowNode> = {}, httpClient: GuardedHttpClient = client) {
  const sleeps: number[] = [];
  const ev = fixedEvent(`evt-ai-${++seq}`, { text: 'The site is down for everyone', order: 'A-17' });
  const record = await executeWorkflow({
    workflow: {
      id: ev.workflowId,
      ownerId: ev.ownerId,
      graph: { nodes: [{ id: 'ai', type: 'ai', params, ...more } as WorkflowNode], edges: [{ from: 'trigger', to: 'ai' }] },
    },
    event: ev,
    ports: {
      http: httpClient,
      clock: () => new Date('2025-03-01T10:00:00.000Z'),
      log: silentLog,
      sandbox: inProcessSandbox,
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0.5,
      createTask: async () => ({}),
      credentials: credentials(),
    },
  });
  return { record, sleeps, step: record.steps[0]! };
}

const mcpRow = { url: '', credential: 'mcp_token' };
const withMcp = () => [{ ...mcpRow, url: mcp.url }];

test('OpenAI-compatible: the model’s tool call is executed on the MCP server with its arguments and fed back; the answer, usage and transcript are the output', async () => {
  const start = openai.received.length;
  const callsBefore = mcp.calls.length;
  const { record, step } = await run({
    credential: 'openai',
    model: 'tooling',
    system: 'You answer about orders.',
    prompt: 'Where is order {{trigger.order}}?',
    temperature: 0.2,
    maxTokens: 300,
    mcpServers: withMcp(),
    inputPricePer1M: 2.5,
    outputPricePer1M: 10,
  });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'A-17' }]);
  const [first, second, ...rest] = openai.received.slice(start);
  assert.equal(rest.length, 0);
  const firstBody = JSON.parse(first!.body) as {
    messages: ChatMessage[];
    tools: { type: string; function: { name: string; parameters: { properties: object } } }[];
  };
  assert.deepEqual(firstBody.messages, [
    { role: 'system', content: 'You answer about orders.' },
    { role: 'user', content: 'Where is order A-17?' },
  ]);
  assert.equal(JSON.parse(first!.body).temperature, 0.2);
  assert.equal(JSON.parse(first!.body).max_tokens, 300);
  assert.equal(firstBody.tools[0]!.type, 'function');
  assert.equal(firstBody.tools[0]!.function.name, 'lookup_order');
  assert.ok('orderId' in firstBody.tools[0]!.function.parameters.properties);
  const secondBody = JSON.parse(second!.body) as { messages: ChatMessage[] };
  assert.deepEqual(secondBody.messages.slice(2), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"A-17"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'order A-17 is shipped' },
  ]);
  const output = step.output as { text: string; usage: object; toolCalls: number; finishReason: string; transcript: { role: string }[] };
  assert.equal(output.text, 'Done: order A-17 is shipped');
  assert.equal(output.finishReason, 'stop');
  assert.deepEqual(output.usage, { inputTokens: 40, outputTokens: 12, totalTokens: 52 });
  // The step's prices per 1M tokens give its cost: 40 × 2.5 / 1M and 12 × 10 / 1M.
  assert.deepEqual((step.output as { cost: unknown }).cost, { input: 0.0001, output: 0.00012, total: 0.00022 });
  assert.equal(output.toolCalls, 1);
  assert.deepEqual(
    output.transcript.map((t) => t.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.deepEqual(output.transcript[2], {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_1', name: 'lookup_order', arguments: { orderId: 'A-17' } }],
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: 'tool_calls',
  });
  // The recorded input names the credentials; no key or token is in the run record.
  assert.deepEqual((step.input as { mcpServers: unknown[] }).mcpServers, [{ url: mcp.url, credential: 'mcp_token', tools: [] }]);
  const recorded = JSON.stringify(record);
  for (const secret of [OPENAI_KEY, MCP_TOKEN]) assert.equal(recorded.includes(secret), false, `${secret} leaked into the run record`);
});

test('Anthropic Messages: x-api-key and anthropic-version, tool_use executed on the MCP server, tool_result fed back, roles alternating', async () => {
  const start = anthropic.received.length;
  const callsBefore = mcp.calls.length;
  const { record, step } = await run({ credential: 'claude', model: 'claude-test', system: 'Be brief.', prompt: 'Where is B-2?', mcpServers: withMcp() });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'B-2' }]);
  const [first, second] = anthropic.received.slice(start);
  const firstBody = JSON.parse(first!.body) as { system: string; max_tokens: number; tools: { name: string; input_schema: { properties: object } }[] };
  assert.equal(firstBody.system, 'Be brief.');
  assert.equal(firstBody.max_tokens, 1024);
  assert.ok('orderId' in firstBody.tools[0]!.input_schema.properties);
  const secondBody = JSON.parse(second!.body) as { messages: unknown[] };
  assert.deepEqual(secondBody.messages.slice(1), [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: { orderId: 'B-2' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'order B-2 is shipped' }] },
  ]);
  const output = step.output as { text: string; usage: object; finishReason: string };
  assert.equal(output.text, 'Anthropic says: order B-2 is shipped');
  assert.equal(output.finishReason, 'end_turn');
  assert.deepEqual(output.usage, { inputTokens: 24, outputTokens: 12, totalTokens: 36 });
  assert.equal('cost' in output, false, 'no cost without prices');
  assert.equal(JSON.stringify(record).includes(ANTHROPIC_KEY), false);
});

const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { priority: { type: 'string', enum: ['low', 'high'] }, reason: { type: 'string' } },
  required: ['priority'],
});

test('structured output: the JSON Schema goes as response_format, the answer is parsed and validated into `json`', async () => {
  const start = openai.received.length;
  const { record, step } = await run({ credential: 'openai', model: 'json-good', prompt: 'Triage: {{trigger.text}}', outputSchema: SCHEMA });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual((step.output as { json: unknown }).json, { priority: 'high', reason: 'outage' });
  assert.deepEqual(JSON.parse(openai.received[start]!.body).response_format, {
    type: 'json_schema',
    json_schema: { name: 'output', schema: JSON.parse(SCHEMA) },
  });
});

test('structured output: an answer that does not match the schema fails the step, saying where; the answer is recorded', async () => {
  const { record, step } = await run({ credential: 'openai', model: 'json-bad', prompt: 'Triage', outputSchema: SCHEMA });
  assert.equal(record.status, 'failed');
  assert.match(step.error!, /does not match the output schema: \/priority must be equal to one of the allowed values/);
  assert.deepEqual((step.output as { error: { json: unknown } }).error.json, { priority: 'urgent' });
  const bad = await run({ credential: 'openai', model: 'json-good', prompt: 'Triage', outputSchema: '{ not json' });
  assert.equal(bad.record.status, 'failed');
  assert.match(bad.step.error!, /outputSchema is not valid JSON/);
});

test('Azure-style key: an openai_compatible credential with keyHeader api-key sends the api-key header, not Authorization', async () => {
  const { record } = await run({ credential: 'azure', model: 'azure', prompt: 'hi' });
  assert.equal(record.status, 'succeeded', record.error ?? '');
});

test('a 429 with Retry-After goes through the retry policy (waits 2 s, then succeeds); a 503 is repeated up to the attempts and fails naming it', async () => {
  const { record, sleeps, step } = await run({ credential: 'openai', model: 'busy', prompt: 'hi' }, { retry: { attempts: 3 } });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(sleeps, [2000]);
  assert.equal(step.attempts, 2);
  assert.equal((step.output as { text: string }).text, 'after the wait');
  const down = await run({ credential: 'openai', model: 'down', prompt: 'hi' }, { retry: { attempts: 2, backoff: 'fixed', delayMs: 10 } });
  assert.equal(down.record.status, 'failed');
  assert.equal(down.step.attempts, 2);
  assert.match(down.step.error!, /The model API answered HTTP 503/);
});

test('the tool-call limit: a model that keeps calling tools fails the step after max tool calls, with the transcript so far; a retry replays the saved calls, calling nothing again', async () => {
  const callsBefore = mcp.calls.length;
  const modelBefore = openai.received.length;
  const { record, step } = await run(
    { credential: 'openai', model: 'loop', prompt: 'go', mcpServers: withMcp(), maxToolCalls: 3 },
    { retry: { attempts: 3, on: ['any'], backoff: 'fixed', delayMs: 1 } },
  );
  assert.equal(record.status, 'failed');
  assert.match(step.error!, /more than 3 tool calls/);
  assert.equal(step.attempts, 3);
  // Three attempts, but the model was asked 4 times and the tool called 3 times in all: the later attempts replayed the saved sub-steps.
  assert.equal(mcp.calls.length - callsBefore, 3);
  assert.equal(openai.received.length - modelBefore, 4);
  const transcript = (step.output as { transcript: { role: string }[] }).transcript;
  assert.equal(transcript.filter((t) => t.role === 'tool').length, 3);
  const none = await run({ credential: 'openai', model: 'tooling', prompt: 'go' });
  assert.equal(none.record.status, 'failed');
  assert.match(none.step.error!, /asked for a tool call, but the step offers no tools/);
});

test('the MCP server’s credential is required by it (401 without), named tools must exist; credential types are checked', async () => {
  const noAuth = await run({ credential: 'openai', model: 'tooling', prompt: 'go', mcpServers: [{ url: mcp.url }] });
  assert.equal(noAuth.record.status, 'failed');
  assert.match(noAuth.step.error!, /could not connect to the MCP server http:\/\/127\.0\.0\.1:\d+/);
  const missing = await run({
    credential: 'openai',
    model: 'tooling',
    prompt: 'go',
    mcpServers: [{ ...mcpRow, url: mcp.url, tools: 'lookup_order, delete_all' }],
  });
  assert.equal(missing.record.status, 'failed');
  assert.match(missing.step.error!, /has no tool "delete_all"/);
  const wrongType = await run({ credential: 'slack_bot', model: 'x', prompt: 'go' });
  assert.equal(wrongType.record.status, 'failed');
  assert.match(wrongType.record.error!, /type slack_bot; this node takes a credential of type openai_compatible, anthropic/);
});

test('SSRF guard: without an allowlist, a loopback model API and a loopback MCP server are refused before any request', async () => {
  const guarded = createGuardedHttpClient();
  try {
    const before = openai.received.length;
    const model = await run({ credential: 'openai', model: 'plain', prompt: 'hi' }, {}, guarded);
    assert.equal(model.record.status, 'failed');
    assert.match(model.step.error!, /blocked|not allowed|refused|private|loopback/i);
    assert.equal(openai.received.length, before);
    const requests = mcp.requests;
    const tools = await run({ credential: 'openai', model: 'plain', prompt: 'hi', mcpServers: withMcp() }, {}, guarded);
    assert.equal(tools.record.status, 'failed');
    assert.match(tools.step.error!, /MCP server .*(blocked|not allowed|refused|private|loopback)/i);
    assert.equal(mcp.requests, requests);
  } finally {
    await guarded.close();
  }
});

test('the step’s time limit: a model that does not answer in timeoutMs fails the step with the limit named', async () => {
  const slow = await startServer(() => {
    /* never answers */
  });
  try {
    const creds = credentials();
    creds.set('slow', { type: 'openai_compatible', fields: { baseUrl: slow.url, keyHeader: 'bearer' } });
    const ev = fixedEvent(`evt-ai-slow-${++seq}`, {});
    const record = await executeWorkflow({
      workflow: {
        id: ev.workflowId,
        ownerId: ev.ownerId,
        graph: {
          nodes: [{ id: 'ai', type: 'ai', params: { credential: 'slow', model: 'm', prompt: 'hi', timeoutMs: 1000 } }],
          edges: [{ from: 'trigger', to: 'ai' }],
        },
      },
      event: ev,
      ports: { http: client, clock: () => new Date(), log: silentLog, sandbox: inProcessSandbox, createTask: async () => ({}), credentials: creds },
    });
    assert.equal(record.status, 'failed');
    assert.match(record.steps[0]!.error!, /1000 ms/);
    // A key-less credential (a local Ollama) sends no Authorization header.
    assert.equal(slow.received[0]!.headers.authorization, undefined);
  } finally {
    await slow.close();
  }
});

test('durable sub-steps: a 429 on the model call after a tool call is retried without calling the tool again', async () => {
  const callsBefore = mcp.calls.length;
  const { record, step, sleeps } = await run(
    { credential: 'openai', model: 'tool-then-busy', prompt: 'go', mcpServers: withMcp() },
    { retry: { attempts: 3 } },
  );
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(sleeps, [1000]);
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'R-1' }]);
  assert.equal((step.output as { text: string }).text, 'Done: order R-1 is shipped');
});

/**
 * A one-step AI workflow on `params` whose engine dies right after the step's first tool call was
 * checkpointed (its store throws on `ai:t1`, as a kill -9 there loses the process); `resume()` is
 * the run claimed again by another engine, reading the stored checkpoints back. `more` adds ports
 * (the Flowdesk tools' workspace).
 */
async function crashAfterFirstTool(params: Record<string, unknown>, more: Partial<ExecuteWorkflowInput['ports']> = {}) {
  const stored = new Map<string, StepCheckpoint>();
  const event = fixedEvent(`evt-ai-crash-${++seq}`, { order: 'D-4' });
  const workflow = {
    id: event.workflowId,
    ownerId: event.ownerId,
    graph: { nodes: [{ id: 'ai', type: 'ai', params } as WorkflowNode], edges: [{ from: 'trigger', to: 'ai' }] },
  };
  const ports = (checkpoint: (steps: StepCheckpoint[]) => Promise<void>): ExecuteWorkflowInput['ports'] => ({
    http: client,
    clock: () => new Date(),
    log: silentLog,
    sandbox: inProcessSandbox,
    createTask: async () => ({}),
    credentials: credentials(),
    ...more,
    checkpoint,
  });
  await assert.rejects(
    executeWorkflow({
      workflow,
      event,
      ports: ports(async (steps) => {
        for (const c of steps) stored.set(checkpointKey(c.step.nodeId, c.step.item), c);
        if (steps.some((c) => c.step.nodeId === 'ai:t1')) throw new Error('engine killed');
      }),
    }),
    /engine killed/,
  );
  return {
    event,
    stored,
    resume: () => executeWorkflow({ workflow, event, ports: ports(async () => {}), resume: { checkpoints: stored } }),
  };
}

test('durable sub-steps: each model and tool call is a checkpoint; a run that dies after the tool call resumes without repeating the model call or the tool', async () => {
  const callsBefore = mcp.calls.length;
  const modelBefore = openai.received.length;
  const crashed = await crashAfterFirstTool({ credential: 'openai', model: 'tooling', prompt: 'Where is {{trigger.order}}?', mcpServers: withMcp() });
  assert.deepEqual([...crashed.stored.keys()], ['ai:m1', 'ai:t1']);
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'A-17' }]);
  assert.equal(openai.received.length - modelBefore, 1);
  // The run claimed again: the saved model call and tool call are read back, only the last model call is made.
  const record = await crashed.resume();
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'A-17' }], 'the tool was not called again');
  assert.equal(openai.received.length - modelBefore, 2, 'the first model call was not made again');
  const output = record.steps[0]!.output as { text: string; toolCalls: number; usage: { totalTokens: number } };
  assert.equal(output.text, 'Done: order A-17 is shipped');
  assert.equal(output.toolCalls, 1);
  assert.equal(output.usage.totalTokens, 52);
  // Sub-steps are checkpoints, not steps of the run record.
  assert.deepEqual(
    record.steps.map((st) => st.nodeId),
    ['ai'],
  );
});

/** The engine's workspace ports as the owner's Flowdesk tools reach them, recording each call. */
function workspaceFake() {
  const created: { ownerId: string; input: unknown; key?: string }[] = [];
  const found: unknown[] = [];
  const byKey = new Map<string, Record<string, unknown>>();
  return {
    created,
    found,
    createTask: async (ownerId: string, input: Record<string, unknown>, opts: { idempotencyKey?: string }) => {
      // As workspace-api: the same key answers the task created first.
      const earlier = opts.idempotencyKey ? byKey.get(opts.idempotencyKey) : undefined;
      if (earlier) return earlier;
      created.push({ ownerId, input, ...(opts.idempotencyKey ? { key: opts.idempotencyKey } : {}) });
      const task = { id: `task-${created.length}`, ...input };
      if (opts.idempotencyKey) byKey.set(opts.idempotencyKey, task);
      return task;
    },
    workspace: {
      findTasks: async (_ownerId: string, query: unknown) => {
        found.push(query);
        return { items: [{ id: 'task-0', title: 'Outage at the data centre' }], nextCursor: null };
      },
      getTask: async () => ({}),
      getProject: async () => ({}),
      updateTask: async () => ({}),
      create: async () => ({}),
    },
  };
}

test("Flowdesk tools, read: the MCP gateway's read tools (its names, descriptions and schemas) called as the owner; create_task is refused (fed back as the tool's error), nothing is created", async () => {
  const fake = workspaceFake();
  const ev = fixedEvent(`evt-ai-read-${++seq}`, {});
  const start = openai.received.length;
  const record = await executeWorkflow({
    workflow: {
      id: ev.workflowId,
      ownerId: ev.ownerId,
      graph: {
        nodes: [{ id: 'ai', type: 'ai', params: { credential: 'openai', model: 'reader', prompt: 'triage', flowdeskTools: 'read' } }],
        edges: [{ from: 'trigger', to: 'ai' }],
      },
    },
    event: ev,
    ports: {
      http: client,
      clock: () => new Date(),
      log: silentLog,
      sandbox: inProcessSandbox,
      createTask: fake.createTask,
      workspace: fake.workspace,
      credentials: credentials(),
    },
  });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const offered = (JSON.parse(openai.received[start]!.body) as { tools: { function: { name: string; description: string; parameters: unknown } }[] }).tools;
  // What the gateway's tools/list says of them, not a copy.
  assert.deepEqual(
    offered.map((t) => t.function),
    ['list_tasks', 'get_task', 'get_project'].map((name) => {
      const def = TOOLS.find((t) => t.name === name)!;
      return { name, description: def.description, parameters: def.inputSchema };
    }),
  );
  assert.deepEqual(fake.found, [{ q: 'outage', status: ['todo'] }]);
  assert.deepEqual(fake.created, []);
  assert.match(
    (record.steps[0]!.output as { text: string }).text,
    /Outage at the data centre.*\| Error: create_task is not allowed: this step's Flowdesk tools are read-only/,
  );
});

test('Flowdesk tools, read and write: killed between create_task and the MCP tool, the resumed run creates the task once and calls the MCP tool once', async () => {
  const fake = workspaceFake();
  const callsBefore = mcp.calls.length;
  const crashed = await crashAfterFirstTool(
    { credential: 'openai', model: 'agent', prompt: 'triage', flowdeskTools: 'read_write', mcpServers: withMcp() },
    { createTask: fake.createTask, workspace: fake.workspace },
  );
  assert.equal(fake.created.length, 1);
  assert.equal(mcp.calls.length, callsBefore);
  const record = await crashed.resume();
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.equal(fake.created.length, 1, 'the task was created once');
  assert.equal(fake.created[0]!.ownerId, crashed.event.ownerId);
  assert.deepEqual(fake.created[0]!.input, { title: 'Fix the outage', priority: 'high' });
  assert.match(fake.created[0]!.key!, /^fd1-.+:t1$/);
  assert.deepEqual(mcp.calls.slice(callsBefore), [{ orderId: 'Z-9' }]);
  assert.equal((record.steps[0]!.output as { text: string }).text, '{"id":"task-1","title":"Fix the outage","priority":"high"} | order Z-9 is shipped');
});

test("Flowdesk tools: arguments that do not fit the gateway's schema are fed back to the model as the tool's error, nothing is called", async () => {
  const fake = workspaceFake();
  const ev = fixedEvent(`evt-ai-badargs-${++seq}`, {});
  const record = await executeWorkflow({
    workflow: {
      id: ev.workflowId,
      ownerId: ev.ownerId,
      graph: {
        nodes: [{ id: 'ai', type: 'ai', params: { credential: 'openai', model: 'bad-args', prompt: 'triage', flowdeskTools: 'read_write' } }],
        edges: [{ from: 'trigger', to: 'ai' }],
      },
    },
    event: ev,
    ports: {
      http: client,
      clock: () => new Date(),
      log: silentLog,
      sandbox: inProcessSandbox,
      createTask: fake.createTask,
      workspace: fake.workspace,
      credentials: credentials(),
    },
  });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(fake.created, []);
  assert.match((record.steps[0]!.output as { text: string }).text, /^Error: invalid arguments for create_task: .*(priority|required)/);
});

test('the transcript in the run record is bounded: past the cap the longest texts are cut to one length, each with a note; short ones are kept whole', () => {
  const entries: TranscriptEntry[] = [
    { role: 'user', content: 'short question' },
    { role: 'tool', toolCallId: 'c1', name: 'lookup_order', content: 'x'.repeat(5_000) },
    { role: 'assistant', content: 'y'.repeat(3_000), usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' },
  ];
  const { transcript, cut } = boundTranscript(entries, 2_000);
  assert.equal(cut, 2);
  assert.equal(transcript[0]!.content, 'short question');
  assert.ok(transcript.reduce((n, e) => n + e.content.length, 0) <= 2_000);
  assert.match(transcript[1]!.content, /^x+\n\[cut: 5000 characters; the run record keeps \d+ of it\]$/);
  assert.match(transcript[2]!.content, /^y+\n\[cut: 3000 characters; the run record keeps \d+ of it\]$/);
  assert.equal(boundTranscript(entries).cut, 0, 'under the default cap nothing is cut');
});
