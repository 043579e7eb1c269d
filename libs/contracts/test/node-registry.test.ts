import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Compile } from 'typebox/compile';
import {
  formFields,
  McpWorkflowNode,
  NODE_CATALOGUE_URI,
  NODE_TYPES,
  UNLISTED_RESOURCES,
  renderNodeCatalogue,
  TOOLS,
  withNodeTable,
  WorkflowGraph,
  workflowArgsToApi,
  type AnyNodeDefinition,
} from '../src/index.ts';

const definitions = NODE_TYPES as readonly AnyNodeDefinition[];

test('docs/workflow-engine.md has the node table generated from the registry (npm run docs:nodes)', async () => {
  const committed = await readFile(new URL('../../../docs/workflow-engine.md', import.meta.url), 'utf8');
  assert.equal(committed, withNodeTable(committed), 'docs/workflow-engine.md is stale: run `npm run docs:nodes`');
  for (const d of definitions) assert.ok(committed.includes(`**${d.label}** (\`${d.type}\`)`), `${d.type} is in the node table`);
});

test('the graph union, the MCP node schema and the node catalogue resource are derived from the registry', () => {
  const types = definitions.map((d) => d.type);
  assert.equal(new Set(types).size, types.length, 'unique type keys');
  // The MCP tools take a node's type as text (the enum cost tools/list ~90 tokens a tool); the catalogue lists every type.
  assert.equal((McpWorkflowNode.properties.type as unknown as { type: string; enum?: string[] }).type, 'string');
  // Each type's params are in the catalogue the workflow tools point to, not in the tools' schemas.
  const catalogue = renderNodeCatalogue();
  for (const d of definitions) {
    const section = catalogue.slice(catalogue.indexOf(`## ${d.label} (\`${d.type}\`)`)).split('\n## ')[0]!;
    assert.ok(section.length > 0 && catalogue.includes(`## ${d.label} (\`${d.type}\`)`), `${d.type} has a section`);
    for (const key of Object.keys(d.params.properties))
      assert.match(section, new RegExp(`^- \`${key}\` \\((required|optional)`, 'm'), `${d.type}.${key} in the catalogue`);
  }
  assert.ok(UNLISTED_RESOURCES.some((r) => r.uri === NODE_CATALOGUE_URI && r.mimeType === 'text/markdown'));
  for (const name of ['get_workflow', 'create_workflow']) assert.ok(TOOLS.find((t) => t.name === name)!.description.includes(NODE_CATALOGUE_URI), name);
  const graph = Compile(WorkflowGraph);
  assert.equal(graph.Check({ nodes: [{ id: 'n1', type: 'no_such_type', params: {} }], edges: [] }), false);
});

test('a param no widget can edit is refused by the form generator, naming the node type and param', () => {
  const broken = { ...definitions[0]!, fields: {} } as unknown as AnyNodeDefinition;
  assert.throws(() => formFields(broken), /param "method" has no field hint/);
});

test('every node takes a retry policy beside onError (the registry common part), within its limits; MCP tools take it as JSON text', () => {
  const graph = Compile(WorkflowGraph);
  const mcpNode = Compile(McpWorkflowNode);
  const http = (retry: unknown) => ({
    nodes: [{ id: 'h', type: 'http_request', onError: 'continue', retry, params: { method: 'POST', url: 'https://example.com' } }],
    edges: [],
  });
  assert.ok(graph.Check(http({ attempts: 3 })));
  assert.ok(
    graph.Check(http({ attempts: 10, backoff: 'fixed', delayMs: 0, maxDelayMs: 3_600_000, jitter: false, on: ['network', 'timeout', '5xx', '429', 'any'] })),
  );
  for (const bad of [
    { attempts: 0 },
    { attempts: 11 },
    { attempts: 2, on: ['4xx'] },
    { attempts: 2, on: [] },
    { attempts: 2, delayMs: 3_600_001 },
    { attempts: 2, extra: 1 },
    {},
  ])
    assert.equal(graph.Check(http(bad)), false, JSON.stringify(bad));
  // Over MCP the policy is JSON text, like params; workspace-api checks it on save (the graph schema above).
  assert.ok(mcpNode.Check({ id: 'h', type: 'http_request', retry: '{"attempts":3,"on":["5xx"]}', params: '{}' }));
  assert.equal(mcpNode.Check({ id: 'h', type: 'http_request', retry: { attempts: 3 }, params: '{}' }), false);
  const api = workflowArgsToApi({ graph: { nodes: [{ id: 'h', type: 'http_request', retry: '{"attempts":3}', params: '{}' }], edges: [] } }) as {
    graph: { nodes: { retry: unknown }[] };
  };
  assert.deepEqual(api.graph.nodes[0]!.retry, { attempts: 3 });
  assert.throws(
    () => workflowArgsToApi({ graph: { nodes: [{ id: 'h', type: 'http_request', retry: '[3]', params: '{}' }], edges: [] } }),
    /graph.nodes\[0\].retry must be the JSON text of an object/,
  );
});
