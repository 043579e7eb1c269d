import { type Static } from 'typebox';
import { StringEnum } from './common.ts';

/** mcp:read grants every read; mcp:write grants reads plus every write; no per-tool access control (docs/mcp-gateway.md, "Scopes and JSON-RPC"). */
export const SCOPES = ['mcp:read', 'mcp:write'] as const;
export const Scope = StringEnum(['mcp:read', 'mcp:write']);
export type Scope = Static<typeof Scope>;

export type Access = 'read' | 'write';

export function parseScopes(scope: string | undefined): Scope[] {
  if (!scope) return [];
  return scope.split(/\s+/).filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}

/** Whether a space-separated scope string allows `access`; write implies read. */
export function allows(scope: string | undefined, access: Access): boolean {
  const granted = parseScopes(scope);
  if (granted.includes('mcp:write')) return true;
  return access === 'read' && granted.includes('mcp:read');
}

export const requiredScopeOf = (access: Access): Scope => (access === 'write' ? 'mcp:write' : 'mcp:read');

/** The 403 message: the scope the operation requires and the remedy (a Read + Write key, or reconnecting the OAuth client). */
export const insufficientScopeMessage = (access: Access) =>
  `This operation requires the ${requiredScopeOf(access)} scope. Create an API key with Read + Write, or reconnect the OAuth client approving mcp:write.`;
