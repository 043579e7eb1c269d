/**
 * The gateway domain's ports: what the tools, resources and prompts need from the outside world.
 * adapters/workspace-client.ts implements WorkspaceApi, adapters/telemetry.ts the tool-call counter;
 * routes/mcp.ts wires them into each request's CallContext. domain/ never imports adapters/
 * (eslint.config.js refuses it).
 */

/** An error answer of workspace-api (or the engine's runs API), with its status and error code. */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | readonly (string | number)[] | null | undefined>;

/** What the tools see of workspace-api: typed calls as one user, errors as UpstreamError. */
export interface WorkspaceApi {
  get<T = object>(path: string, query?: Query): Promise<T>;
  post<T = object>(path: string, body?: unknown): Promise<T>;
  patch<T = object>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
}

/** How a tools/call ended, as counted (docs/observability.md). */
export type ToolCallResult = 'ok' | 'tool_error' | 'invalid_params' | 'forbidden';

/** Counts one tools/call (adapters/telemetry.ts: flowdesk_mcp_tool_calls_total). */
export type CountToolCall = (name: string, result: ToolCallResult) => void;
