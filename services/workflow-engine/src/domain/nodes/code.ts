/**
 * Code node: runs the node's JavaScript in the sandbox (ports.sandbox: QuickJS, adapters/code-sandbox.ts, in the engine's worker pool) with JSON copies
 * of the trigger, the headers, earlier outputs and the For each item; outputs what the code returns.
 * The code is not templated (a `{{…}}` in it is text): it reads its data as variables instead.
 */
import type { NodeParams } from '@flowdesk/contracts';
import type { CodeInput } from '../sandbox-port.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export type CodeParams = NodeParams<'code'>;
export interface CodeNodeInput {
  code: string;
  data: CodeInput;
}

export const codeHandler: NodeHandler<CodeParams, CodeNodeInput> = {
  isAction: false,
  render: (params: CodeParams, renderer: TemplateRenderer) => ({ code: params.code, data: renderer.data() }),
  // The data is already in the run (trigger, earlier steps): the step records the code's size, not a copy of everything.
  mask: (input) => ({ codeChars: input.code.length }),
  // In the engine's sandbox (ports.sandbox: a worker pool with a deadline enforced from outside), as the run's owner.
  // A step that can park asks to be handed back rather than wait for its owner's sandbox budget or
  // workers: the executor then parks the run (SandboxThrottled, executor.ts parkForSandbox) and, woken,
  // runs the code again.
  execute: async (input, ctx) => ({
    output: await ctx.ports.sandbox.runCode({
      ownerId: ctx.ownerId,
      code: input.code,
      data: input.data,
      signal: ctx.signal,
      ...(ctx.canPark ? { parkWhenThrottled: true } : {}),
    }),
  }),
};
