import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Compile } from 'typebox/compile';
import { formFields, McpWorkflowNode, NODE_TYPES, nodeTypeList, TOOLS, withNodeTable, WorkflowGraph, type AnyNodeDefinition } from '../src/index.ts';

const definitions = NODE_TYPES as readonly AnyNodeDefinition[];

test('docs/workflow-engine.md has the node table generated from the registry (npm run docs:nodes)', async () => {
  const committed = await readFile(new URL('../../../docs/workflow-engine.md', import.meta.url), 'utf8');
  assert.equal(committed, withNodeTable(committed), 'docs/workflow-engine.md is stale: run `npm run docs:nodes`');
  for (const d of definitions) assert.ok(committed.includes(`**${d.label}** (\`${d.type}\`)`), `${d.type} is in the node table`);
});

test('the graph union, the MCP node schema and get_workflow are derived from the registry', () => {
  const types = definitions.map((d) => d.type);
  assert.equal(new Set(types).size, types.length, 'unique type keys');
  assert.deepEqual((McpWorkflowNode.properties.type as unknown as { enum: string[] }).enum, types);
  const mcpParams = Object.keys((McpWorkflowNode.properties.params as unknown as { properties: object }).properties);
  for (const d of definitions)
    for (const key of Object.keys(d.params.properties)) {
      // A param whose hint says mcp: false is left out of the tools (the API's default applies).
      const offered = (d.fields as Record<string, { mcp?: unknown }>)[key]!.mcp !== false;
      assert.equal(mcpParams.includes(key), offered, `MCP params ${offered ? 'have' : 'leave out'} ${d.type}.${key}`);
    }
  assert.match(TOOLS.find((t) => t.name === 'get_workflow')!.description, new RegExp(`\\(${nodeTypeList()} nodes\\)`));
  const graph = Compile(WorkflowGraph);
  assert.equal(graph.Check({ nodes: [{ id: 'n1', type: 'no_such_type', params: {} }], edges: [] }), false);
});

test('a param no widget can edit is refused by the form generator, naming the node type and param', () => {
  const broken = { ...definitions[0]!, fields: {} } as unknown as AnyNodeDefinition;
  assert.throws(() => formFields(broken), /param "method" has no field hint/);
});
