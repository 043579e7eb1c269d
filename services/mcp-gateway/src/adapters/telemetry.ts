import { counter } from '@flowdesk/telemetry';
import { TOOLS_BY_NAME } from '@flowdesk/contracts';
import type { CountToolCall } from '../domain/ports.ts';

/** The gateway's metrics (docs/observability.md). Tool names are from the fixed catalogue only. */
const owner = 'mcp-gateway';
export const sessionsOpened = counter({ name: 'flowdesk_mcp_sessions_opened_total', help: 'MCP sessions opened (initialize)', owner });
export const sessionsClosed = counter({ name: 'flowdesk_mcp_sessions_closed_total', help: 'MCP sessions ended by the client (DELETE)', owner });
const toolCalls = counter<'tool' | 'result'>({
  name: 'flowdesk_mcp_tool_calls_total',
  help: 'MCP tools/call by tool and result (ok, tool_error, invalid_params, forbidden)',
  labelNames: ['tool', 'result'],
  owner,
});

/** Counts one call; a name outside the catalogue is `unknown` (the label never holds what a client typed). */
export const countToolCall: CountToolCall = (name, result) => {
  toolCalls.inc({ tool: TOOLS_BY_NAME.has(name) ? name : 'unknown', result });
};
