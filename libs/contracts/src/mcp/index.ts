export * from './json-schema.ts';
export * from './tools.ts';
export * from './resources.ts';
export * from './prompts.ts';
export * from './docs.ts';
export * from './workflow-input.ts';

/** The newest `initialize`-based MCP revision the gateway implements (docs/mcp-gateway.md, "Protocol version"). */
export const MCP_PROTOCOL_VERSION = '2025-11-25';
/** Revisions a client may negotiate with `initialize`; a newer or unknown request is answered with MCP_PROTOCOL_VERSION. */
export const MCP_SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
/** The sessionless revision (per-request `_meta` envelope, `server/discover`), served at the same endpoint. */
export const MCP_STATELESS_PROTOCOL_VERSION = '2026-07-28';
/** What a request without an MCP-Protocol-Version header is taken to speak (MCP 2025-06-18, transports). */
export const MCP_DEFAULT_PROTOCOL_VERSION = '2025-03-26';
/** Public path of the MCP endpoint. */
export const MCP_PATH = '/functions/v1/mcp-server-v2';
