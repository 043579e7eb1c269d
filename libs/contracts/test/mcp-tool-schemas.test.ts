// What MCP clients need of the tool schemas (issue 12): strict-mode conversion in the OpenAI Agents
// SDK, a description on every input property, and a tools/list that fits a model's context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEncoding } from 'js-tiktoken';
import { mcpToFunctionTool, type MCPServer } from '@openai/agents-core';
import { TOOLS, listedTools, propertiesAtEveryDepth, subSchemas } from '../src/index.ts';

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

test('tools/list costs under 10,000 tokens (o200k_base) and keeps what a model needs', () => {
  const listing = JSON.stringify({ tools: listedTools() });
  const tokens = getEncoding('o200k_base').encode(listing).length;
  // Measured: 21,690 tokens (85 KB) with output schemas and unslimmed annotations; 9,622 (40 KB) after;
  // 9,983 with four node types' params in create/update_workflow, 9,333 with them in the node catalogue resource.
  assert.ok(tokens < 10_000, `tools/list is ${tokens} tokens`);
  for (const t of listedTools()) {
    assert.ok(t.description.length >= 30 && t.title && t.inputSchema.type === 'object', t.name);
    assert.equal(t.annotations.openWorldHint, false, t.name);
    assert.equal(typeof t.annotations.readOnlyHint, 'boolean', t.name);
    if (!t.annotations.readOnlyHint) assert.equal(typeof t.annotations.destructiveHint, 'boolean', t.name);
  }
});
