// The tool registry: every catalogue tool (libs/contracts) has exactly one handler bound with
// defineTool, and no handler is bound to a tool the catalogue does not list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL, TOOLS, TOOLS_BY_NAME, type ToolName } from '@flowdesk/contracts';
import { TOOL_HANDLERS } from '../src/domain/tool-handlers.ts';
import { defineTool, toolRegistry, type BoundTool } from '../src/domain/define-tool.ts';

test('every listed tool has a handler, and every handler belongs to a listed tool', () => {
  assert.deepEqual([...TOOL_HANDLERS.keys()].sort(), TOOLS.map((t) => t.name).sort());
  for (const [name, bound] of TOOL_HANDLERS) {
    assert.equal(bound.spec, TOOLS_BY_NAME.get(name), `${name} is bound to the catalogue's own definition`);
    assert.equal(typeof bound.handler, 'function', name);
  }
});

test('the registry refuses, at start, a tool left without a handler, a tool bound twice and a tool not in the catalogue', () => {
  // Each case below is a compile error too; the casts get past the compiler to show the check at start.
  const all = [...TOOL_HANDLERS.values()];
  const tags = defineTool(TOOL.list_tags, (_a, api) => api.get('/tags'));
  // @ts-expect-error -- a registry missing catalogue tools does not compile (the type names them)
  assert.throws(() => toolRegistry([tags]), /tools without a handler: list_projects, get_project, /);
  const unchecked = (tools: BoundTool[]) => toolRegistry(tools as BoundTool<ToolName>[]);
  assert.throws(() => unchecked([...all, tags]), /tool list_tags has two handlers/);
  const stranger = { ...TOOL.list_tags, name: 'list_everything' };
  assert.throws(() => unchecked([...all, defineTool(stranger, async () => ({}))]), /tool list_everything is not in the catalogue/);
  const copy = { ...TOOL.list_tags };
  assert.throws(
    () => unchecked([...all.filter((t) => t.spec.name !== 'list_tags'), defineTool(copy, async () => ({}))]),
    /tool list_tags is not in the catalogue/,
  );
});

test('a handler’s arguments are typed from its tool’s input schema', () => {
  // Compile-time checks (npm run lint:code type-checks this file): a misspelt or mistyped argument is an error.
  const bound = defineTool(TOOL.get_task, async (a) => {
    // @ts-expect-error -- the argument is taskId
    void a.taskid;
    const id: string = a.taskId;
    return { id };
  });
  assert.equal(bound.spec, TOOL.get_task);
  defineTool(TOOL.get_upcoming, async (a) => {
    // @ts-expect-error -- days is a number (or absent), not a string
    const days: string = a.days;
    return { days };
  });
});
