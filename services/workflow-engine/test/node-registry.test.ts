// Walks the node registry (libs/contracts/src/nodes): every node type has an engine handler, a
// console form (generated from its params schema and hints), a row in docs/workflow-engine.md's
// generated node table, its type in the MCP tools' schemas and its params in the MCP node catalogue resource. A new node type that misses one of
// them fails here by name (the handler map also fails to compile without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  formFields,
  McpWorkflowNode,
  NODE_CATALOGUE_URI,
  NODE_TYPES,
  renderNodeCatalogue,
  TOOLS,
  withNodeTable,
  type AnyNodeDefinition,
} from '@flowdesk/contracts';
import { nodeHandlers } from '../src/domain/nodes/index.ts';

const definitions = NODE_TYPES as readonly AnyNodeDefinition[];
const docs = await readFile(new URL('../../../docs/workflow-engine.md', import.meta.url), 'utf8');

test('every node type has a handler, and every handler a node type', () => {
  const handlers = nodeHandlers() as Record<string, { render?: unknown; mask?: unknown; execute?: unknown; isAction?: unknown }>;
  assert.deepEqual(Object.keys(handlers).sort(), definitions.map((d) => d.type).sort());
  for (const d of definitions) {
    const h = handlers[d.type]!;
    assert.ok(typeof h.render === 'function' && typeof h.mask === 'function' && typeof h.execute === 'function', `${d.type}: render, mask, execute`);
    assert.equal(h.isAction, d.action, `${d.type}: the handler's isAction is the definition's action`);
  }
});

test('every node type has a form: one field per param, each with a label and a widget', () => {
  for (const d of definitions) {
    const fields = formFields(d);
    assert.deepEqual(
      fields.map((f) => f.key),
      Object.keys(d.params.properties),
      `${d.type}: a field per param`,
    );
    for (const f of fields) assert.ok(f.hint.label && f.widget, `${d.type}.${f.key}`);
  }
});

test('every node type is in the generated node table of docs/workflow-engine.md', () => {
  assert.equal(docs, withNodeTable(docs), 'the node table is stale: run `npm run docs:nodes`');
  for (const d of definitions) assert.ok(docs.includes(`| **${d.label}** (\`${d.type}\`) |`), `${d.type} has a row`);
});

test('every node type is in the node catalogue resource the MCP workflow tools point to, with each of its params', () => {
  // The tools take a node's type as text (an enum cost ~90 tokens per tool of tools/list's budget):
  // the catalogue resource is where a model finds the types, and workspace-api refuses an unknown one.
  const mcp = McpWorkflowNode as unknown as { properties: { type: { type: string } } };
  assert.equal(mcp.properties.type.type, 'string');
  const createWorkflow = JSON.stringify(TOOLS.find((t) => t.name === 'create_workflow')!.inputSchema);
  assert.ok(createWorkflow.includes(NODE_CATALOGUE_URI), 'create_workflow points to the catalogue');
  const catalogue = renderNodeCatalogue();
  for (const d of definitions) {
    const section = catalogue.split('\n## ').find((s) => s.startsWith(`${d.label} (\`${d.type}\`)`));
    assert.ok(section, `${d.type} has a section in the catalogue`);
    for (const key of Object.keys(d.params.properties)) assert.ok(section.includes(`\n- \`${key}\` (`), `${d.type}.${key} in the catalogue`);
  }
});
