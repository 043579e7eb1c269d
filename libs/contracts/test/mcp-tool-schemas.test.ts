// What MCP clients need of the tool schemas (issue 12): strict-mode conversion in the OpenAI Agents
// SDK, a description on every input property, and a tools/list that fits a model's context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEncoding } from 'js-tiktoken';
import { mcpToFunctionTool, type MCPServer } from '@openai/agents-core';
import { TOOLS, listedSchema, listedTools, propertiesAtEveryDepth, subSchemas, toolIconPath } from '../src/index.ts';

test('every input schema converts under the OpenAI Agents SDK strict mode (its own MCP converter)', () => {
  const server = { name: 'flowdesk' } as unknown as MCPServer;
  const warnings: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  try {
    for (const t of listedTools()) {
      // convertSchemasToStrict: the SDK falls back to a non-strict tool (and logs) when it cannot convert.
      const fn = mcpToFunctionTool({ name: t.name, description: t.description, inputSchema: t.inputSchema as never }, server, true) as {
        strict?: boolean;
        parameters: unknown;
      };
      assert.equal(fn.strict, true, `${t.name} did not convert to strict mode`);
    }
  } finally {
    console.warn = warn;
  }
});

test('strict-mode rules hold everywhere in the input schemas: closed objects, no patternProperties, no empty {} schemas', () => {
  for (const t of TOOLS) {
    for (const [at, s] of subSchemas(t.inputSchema)) {
      const where = `${t.name} ${at}`;
      assert.equal('patternProperties' in s, false, `${where}: patternProperties`);
      assert.ok(
        Object.keys(s).some((k) => ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref'].includes(k)),
        `${where}: a schema that says nothing ({})`,
      );
      if (s.type === 'object') assert.equal(s.additionalProperties, false, `${where}: an open object`);
    }
  }
});

test('every input property of every tool has a description, at every depth (nested objects, items, anyOf/oneOf, additionalProperties)', () => {
  // The walker itself reaches every kind of nesting (a schema made up for it).
  const probe = {
    type: 'object',
    properties: {
      a: { type: 'array', description: 'a', items: { type: 'object', properties: { b: { type: 'string' } } } },
      c: { description: 'c', anyOf: [{ type: 'object', properties: { d: { type: 'string' } } }, { type: 'null' }] },
      e: { description: 'e', oneOf: [{ type: 'object', properties: { f: { type: 'string' } } }] },
      g: { type: 'object', description: 'g', additionalProperties: { type: 'object', properties: { h: { type: 'string' } } } },
    },
  };
  assert.deepEqual(
    [...propertiesAtEveryDepth(probe)].filter(([, p]) => !p.description).map(([at]) => at),
    ['$.a[].b', '$.c|anyOf0.d', '$.e|oneOf0.f', '$.g{}.h'],
  );
  const missing = [...TOOLS, ...listedTools()].flatMap((t) =>
    [...propertiesAtEveryDepth(t.inputSchema)].filter(([, p]) => typeof p.description !== 'string' || !p.description.trim()).map(([at]) => `${t.name} ${at}`),
  );
  assert.deepEqual(missing, []);
});

/**
 * Base URLs of 60 characters (the longest the budget is held for): a DNS name of words with a port, a
 * cluster-local name with a hash and a path, an IP with a port and a path prefix. Each tool's icon
 * URL repeats the base, so the listing grows with it (10,175 tokens from http://127.0.0.1:45080 before).
 */
const LONG_BASE_URLS = [
  'https://flowdesk-staging-eu-west-3.internal.acme-corp.exampl',
  'http://mcp-gateway-7f9c2d.svc.cluster.local:30080/flowdesk-w',
  'https://192.168.100.200:45080/some/path/prefix/for/flowdesk1',
];

test('tools/list costs under 10,000 tokens (o200k_base) with its icons under any 60-character base URL, and keeps what a model needs', () => {
  const encoding = getEncoding('o200k_base');
  for (const base of LONG_BASE_URLS) {
    assert.equal(base.length, 60);
    const listed = listedTools(undefined, { iconBaseUrl: base });
    const tokens = encoding.encode(JSON.stringify({ tools: listed })).length;
    // Measured: 21,690 tokens (85 KB) with output schemas and unslimmed annotations; 9,622 (40 KB) after;
    // 9,983 with four node types' params in create/update_workflow, 9,333 with them in the node catalogue resource;
    // 9,752 with an icon per tool (+858) and without length bounds or idempotentHint: false (-542); 9,857 with 19 node types,
    // retention and a retry policy as JSON text (a structured one cost 170 tokens per workflow tool); 9,865 with Run workflow
    // (from https://flowdesk.example.com; 10,175 from http://127.0.0.1:45080, 10,581 from the second base here). Then
    // shorter id descriptions (-220), no maxItems, minimum: 1, patterns or readOnlyHint: false, no icon on the 8
    // workspace-wide tools (-264 at 60 characters), shorter list_tasks/create_task descriptions: 9,533 / 9,797 / 9,753
    // for the three bases here (9,005 from https://flowdesk.example.com, 9,269 from http://127.0.0.1:45080).
    // With get_workflow_versions and Get Task 10,003 at the longest base; update_workflow's node type as text
    // (create_workflow keeps the enum): 9,953. With Slack, Discord and Teams: 9,693 / 9,963 / 9,918 for the three bases; with the AI step 9,695 / 9,965 / 9,920.
    // import_workflow, get_workflow asFile, workflow tags (list_workflows tag and sort, tags in create/update), a node's disabled:
    // 10,223 at the second base; then create_workflow's node type as text, shorter workflow and task descriptions and no
    // uniqueItems in the listing: 9,694 / 9,970 / 9,924.
    assert.ok(tokens < 10_000, `tools/list from ${base} is ${tokens} tokens`);
    for (const t of listed) {
      if (toolIconPath(t.name) === '/favicon.svg') assert.equal(t.icons, undefined, `${t.name}: the server's icon is its icon`);
      else assert.equal(t.icons?.[0]?.src, `${base}${toolIconPath(t.name)}`, t.name);
      assert.ok(t.description.length >= 30 && t.title && t.inputSchema.type === 'object', t.name);
      assert.equal(t.annotations.openWorldHint, false, t.name);
      // readOnlyHint false is the default: only read tools say it; a write tool says whether it destroys.
      const tool = TOOLS.find((x) => x.name === t.name)!;
      assert.equal(t.annotations.readOnlyHint, tool.annotations.readOnlyHint ? true : undefined, t.name);
      if (!t.annotations.readOnlyHint) assert.equal(typeof t.annotations.destructiveHint, 'boolean', t.name);
    }
    assert.ok(listed.filter((t) => t.icons).length >= 40, 'most tools carry the icon of their kind');
  }
});

test('the listed schemas drop bounds and patterns only, never a property that happens to be called maxLength', () => {
  const schema = {
    type: 'object',
    properties: {
      maxLength: { type: 'integer', description: 'x' },
      t: { type: 'string', minLength: 1, maxLength: 9, pattern: '^a' },
      u: { type: 'string', minLength: 2 },
    },
  };
  assert.deepEqual(listedSchema(schema), {
    type: 'object',
    properties: { maxLength: { type: 'integer', description: 'x' }, t: { type: 'string' }, u: { type: 'string', minLength: 2 } },
  });
  // Item counts go too; closed objects stay closed (strict mode).
  assert.deepEqual(listedSchema({ type: 'object', additionalProperties: false, properties: { a: { type: 'array', maxItems: 3, minItems: 1 } } }), {
    type: 'object',
    additionalProperties: false,
    properties: { a: { type: 'array', minItems: 1 } },
  });
  // The full schemas (what the server validates with) keep their bounds.
  assert.equal((TOOLS.find((t) => t.name === 'create_task')!.inputSchema.properties as Record<string, { maxLength?: number }>).title!.maxLength, 500);
});

test('the icon of a tool is the kind of thing it works on', () => {
  assert.equal(toolIconPath('list_calendar_entries'), '/icons/calendar.svg');
  assert.equal(toolIconPath('get_agenda'), '/icons/calendar.svg');
  assert.equal(toolIconPath('regenerate_webhook_secret'), '/icons/workflow.svg');
  assert.equal(toolIconPath('list_workflow_runs'), '/icons/workflow.svg');
  assert.equal(toolIconPath('add_comment'), '/icons/comment.svg');
  assert.equal(toolIconPath('bulk_update_tasks'), '/icons/task.svg');
  assert.equal(toolIconPath('search_notes'), '/icons/note.svg');
  assert.equal(toolIconPath('get_workspace_overview'), '/favicon.svg');
});
