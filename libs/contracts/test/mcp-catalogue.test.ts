import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { NODE_CATALOGUE_URI, PROMPTS, RESOURCES, RESOURCE_TEMPLATES, TOOL, TOOLS, TOOL_DOMAINS, UNLISTED_RESOURCES, renderMcpToolsDoc } from '../src/index.ts';

test('the catalogue: tools in 12 domains, each one reachable by name; 4 + 1 resources as the specification says (the node catalogue unlisted), 4 prompts', () => {
  // The tool count is the catalogue's own (docs/mcp-tools.md states it); the gateway's tests take it from here.
  assert.equal(Object.keys(TOOL).length, TOOLS.length);
  for (const t of TOOLS) assert.equal(TOOL[t.name], t, t.name);
  assert.equal(TOOL_DOMAINS.length, 12);
  for (const d of TOOL_DOMAINS)
    assert.ok(
      TOOLS.some((t) => t.domain === d),
      `domain ${d} has tools`,
    );
  assert.equal(RESOURCES.length, 4);
  assert.equal(RESOURCE_TEMPLATES.length, 1);
  assert.deepEqual(
    UNLISTED_RESOURCES.map((r) => r.uri),
    [NODE_CATALOGUE_URI],
  );
  assert.deepEqual(
    PROMPTS.map((p) => p.name),
    ['plan_my_week', 'daily_standup', 'sprint_retrospective', 'project_kickoff'],
  );
});

test('every tool is well-formed: unique snake_case name, object schemas without $id, coherent hints', () => {
  assert.equal(new Set(TOOLS.map((t) => t.name)).size, TOOLS.length);
  for (const t of TOOLS) {
    assert.match(t.name, /^[a-z][a-z0-9_]{2,63}$/, t.name);
    assert.ok(t.description.length >= 30, `${t.name} has a real description`);
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.outputSchema.type, 'object', t.name);
    assert.doesNotMatch(JSON.stringify([t.inputSchema, t.outputSchema]), /"\$id"/, t.name);
    assert.equal(t.annotations.openWorldHint, false);
    if (t.access === 'read') assert.equal(t.annotations.readOnlyHint, true, `${t.name}: reads are read-only`);
    if (t.annotations.readOnlyHint) assert.equal(t.annotations.destructiveHint, false, t.name);
  }
  assert.ok(TOOLS.filter((t) => t.access === 'write').length >= 20);
});

test('docs/mcp-tools.md is generated from the catalogue and up to date (npm run docs:mcp)', async () => {
  const committed = await readFile(new URL('../../../docs/mcp-tools.md', import.meta.url), 'utf8');
  assert.equal(committed, renderMcpToolsDoc(), 'docs/mcp-tools.md is stale: run `npm run docs:mcp`');
});
