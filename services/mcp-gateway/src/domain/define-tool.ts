import type { Static, TSchema } from 'typebox';
import { TOOLS, TOOLS_BY_NAME, type ToolDefinition, type ToolName } from '@flowdesk/contracts';
import type { WorkspaceApi } from './ports.ts';

/** How a tool becomes workspace-api calls: its arguments (validated), workspace-api as the caller, the clock. */
export type ToolHandler<A = unknown> = (args: A, api: WorkspaceApi, now: Date) => Promise<object>;

/** A catalogue tool with its handler: what tools/call runs. */
export interface BoundTool<N extends string = string> {
  readonly spec: ToolDefinition<N>;
  /** Called only with arguments that passed `spec.inputSchema` (mcp-server.ts validates first). */
  readonly handler: ToolHandler;
}

/**
 * Binds a handler to a tool of the catalogue (libs/contracts/src/mcp/tools.ts), like the MCP SDK's
 * registerTool(name, config, handler): the handler's arguments are typed from the tool's TypeBox
 * input schema, so a renamed or retyped argument is a compile error in the handler.
 */
export function defineTool<N extends string, I extends TSchema>(spec: ToolDefinition<N, I>, handler: ToolHandler<Static<I>>): BoundTool<N> {
  // The arguments are validated against spec.inputSchema (the same schema as JSON) before the call.
  return { spec, handler: handler as ToolHandler };
}

/** What the compiler says when a catalogue tool has no handler: the missing names. */
type EveryToolBound<N extends string> = [Exclude<ToolName, N>] extends [never] ? unknown : { 'tools without a handler': Exclude<ToolName, N> };

/**
 * The gateway's tools by name. A catalogue tool without a handler does not compile (the type names
 * it) and, should a cast get around that, fails here at start; so do a tool bound twice and a spec
 * that is not the catalogue's.
 */
export function toolRegistry<N extends ToolName>(tools: readonly BoundTool<N>[] & EveryToolBound<N>): ReadonlyMap<string, BoundTool> {
  const byName = new Map<string, BoundTool>();
  for (const tool of tools) {
    if (TOOLS_BY_NAME.get(tool.spec.name) !== tool.spec) throw new Error(`tool ${tool.spec.name} is not in the catalogue`);
    if (byName.has(tool.spec.name)) throw new Error(`tool ${tool.spec.name} has two handlers`);
    byName.set(tool.spec.name, tool);
  }
  const unbound = TOOLS.map((t) => t.name).filter((name) => !byName.has(name));
  if (unbound.length > 0) throw new Error(`tools without a handler: ${unbound.join(', ')}`);
  return byName;
}
