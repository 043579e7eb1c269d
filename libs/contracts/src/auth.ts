import Type, { type Static } from 'typebox';
import { DateTime, StringEnum, Uuid } from './common.ts';
import { Scope } from './scopes.ts';

/**
 * API keys and Connected Apps: the user-facing part of the auth service (key management under
 * /auth/v1, called with the user's own credential), and the OAuth-style answers it gives to other
 * services (introspection, token exchange).
 */

/** Every API key starts with this, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'fdk';
/** Public path of the key-management API (the front routes /auth/ to the auth service). */
export const AUTH_API_PREFIX = '/auth/v1';

/** What a person picks at creation: Read (`mcp:read`) or Read + Write (`mcp:write`). */
export const KeyAccess = StringEnum(['read', 'write'], { description: 'read → mcp:read; write → mcp:write (includes reads)' });
export type KeyAccess = Static<typeof KeyAccess>;

export const CreateApiKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    scope: KeyAccess,
  },
  { additionalProperties: false },
);
export type CreateApiKey = Static<typeof CreateApiKey>;

export const ApiKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    scope: Scope,
    /** `fdk_` + the first 8 characters of the secret part: recognisable, not usable. */
    prefix: Type.String(),
    createdAt: DateTime,
    lastUsedAt: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKey>;

/** The answer to a creation: the only time the secret is ever shown. */
export const CreatedApiKey = Type.Intersect([ApiKey, Type.Object({ secret: Type.String() })]);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ApiKeyList = Type.Object({ items: Type.Array(ApiKey) });
export type ApiKeyList = Static<typeof ApiKeyList>;

/** One entry of Settings → Connected Apps. OAuth clients join as type 'oauth_client'. */
export const ConnectedApp = Type.Object({
  id: Uuid,
  type: StringEnum(['api_key', 'oauth_client']),
  name: Type.String(),
  scope: Type.String(),
  createdAt: DateTime,
  lastUsedAt: Type.Union([DateTime, Type.Null()]),
});
export type ConnectedApp = Static<typeof ConnectedApp>;

export const ConnectedAppList = Type.Object({ items: Type.Array(ConnectedApp) });
export type ConnectedAppList = Static<typeof ConnectedAppList>;

/** RFC 6749 §5.2 error body, used by every /oauth/ endpoint (the JSON API uses ErrorBody). */
export const OAuthErrorBody = Type.Object({
  error: Type.String(),
  error_description: Type.Optional(Type.String()),
});
export type OAuthErrorBody = Static<typeof OAuthErrorBody>;

/** RFC 7662 answer. Inactive tokens reveal nothing else. */
export const Introspection = Type.Union([
  Type.Object({
    active: Type.Literal(true),
    sub: Type.String(),
    scope: Type.String(),
    client_id: Type.String(),
    token_type: Type.String(),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    /** OAuth access tokens: the RFC 8707 resource they were issued for (the MCP endpoint's URL). */
    aud: Type.Optional(Type.String()),
  }),
  Type.Object({ active: Type.Literal(false) }),
]);
export type Introspection = Static<typeof Introspection>;

/** RFC 8693 token exchange. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** Ours: the subject is a user id, for services allowed to act for any user (workflow runs). */
export const USER_ID_TOKEN_TYPE = 'urn:flowdesk:params:oauth:token-type:user-id';

export const TokenExchangeResponse = Type.Object({
  access_token: Type.String(),
  issued_token_type: Type.Literal(JWT_TOKEN_TYPE),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
});
export type TokenExchangeResponse = Static<typeof TokenExchangeResponse>;
