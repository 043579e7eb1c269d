import Type, { type Static } from 'typebox';

/**
 * The short-lived internal JWT that the auth service mints for a downstream service, on behalf of a
 * user. A caller's own token (API key, OAuth access token) never crosses a service boundary.
 */
export const INTERNAL_ISSUER = 'flowdesk-auth';
export const INTERNAL_JWT_ALGORITHM = 'EdDSA';
/** Lifetime of an internal token, seconds: long enough for one upstream request and its retries. */
export const INTERNAL_TOKEN_TTL_SECONDS = 300;

export const Audience = {
  workspaceApi: 'workspace-api',
  /** The runs API (runs and their steps are the engine's data). */
  workflowEngine: 'workflow-engine',
} as const;

export const InternalClaims = Type.Object({
  iss: Type.Literal(INTERNAL_ISSUER),
  /** The user the request acts for (a UUID), or `svc:<service id>` for a service acting as itself. */
  sub: Type.String(),
  aud: Type.String(),
  /** Space-separated scopes, the subset the caller's credential holds. */
  scope: Type.String(),
  /** The service that asked for the token (mcp-gateway, workflow-engine, ...). */
  azp: Type.Optional(Type.String()),
  /** The OAuth client or API key behind the request, for audit. */
  client_id: Type.Optional(Type.String()),
  iat: Type.Integer(),
  exp: Type.Integer(),
  jti: Type.Optional(Type.String()),
});
export type InternalClaims = Static<typeof InternalClaims>;

/** What a service knows about its caller after verifying the internal token. */
export interface Identity {
  userId: string;
  scope: string;
  azp: string | undefined;
  clientId: string | undefined;
}

/**
 * A service acting as itself (not for a user), e.g. webhook-ingest looking up a trigger: the token's
 * `sub` is `svc:<service id>` and `azp` the service id. User routes refuse it (their `sub` must be a
 * user id); service routes name the services they accept.
 */
export const SERVICE_SUBJECT_PREFIX = 'svc:';
export const serviceSubject = (serviceId: string) => `${SERVICE_SUBJECT_PREFIX}${serviceId}`;
