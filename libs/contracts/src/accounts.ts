import Type, { type Static } from 'typebox';
import { DateTime, StringEnum, Uuid } from './common.ts';

/**
 * Accounts and web console sessions: the auth service's part of the console (under AUTH_API_PREFIX,
 * /auth/v1). The console's edge signs people in here and keeps the `fds_` token in its HttpOnly
 * cookie (CONSOLE_SESSION_COOKIE). /auth/v1 accepts it as a bearer token only from the console edge
 * (CONSOLE_CLIENT_HEADER): a session token is a cookie credential, never a caller's own bearer.
 * docs/auth.md ("Accounts and console sessions") explains expiry, throttling and signup modes.
 */

/** Every console session token starts with this: `fds_` + 32 random bytes, base64url. */
export const CONSOLE_SESSION_PREFIX = 'fds';
/** The cookie that carries the session token in browsers (set by the console; read by the OAuth consent page). */
export const CONSOLE_SESSION_COOKIE = 'fd_session';
/** The service client id of the console edge: the only caller for which introspection and token exchange accept session tokens. */
export const CONSOLE_SERVICE_CLIENT = 'console';
/**
 * The console edge's own credential (HTTP Basic as CONSOLE_SERVICE_CLIENT) on the requests where it
 * passes a browser's session token to /auth/v1 as `Authorization: Bearer fds_...`. Without it auth
 * refuses a session token there (401): whoever holds a leaked token cannot use it outside the cookie.
 */
export const CONSOLE_CLIENT_HEADER = 'x-flowdesk-console-authorization';
/** What introspection answers as token_type for a console session. */
export const CONSOLE_SESSION_TOKEN_TYPE = 'console_session';

/** Password policy for new passwords (setup, signup, change, CLI): 10 to 200 characters. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

export const Role = StringEnum(['owner', 'member']);
export type Role = Static<typeof Role>;

export const SignupMode = StringEnum(['open', 'invite', 'off']);
export type SignupMode = Static<typeof SignupMode>;

const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const NewPassword = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH });
/** A password being checked (sign-in): any length up to the maximum, so no policy is revealed. */
const AnyPassword = Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH });

export const AccountUser = Type.Object({ id: Uuid, email: Type.String(), name: Type.String(), role: Role });
export type AccountUser = Static<typeof AccountUser>;

export const SetupStatus = Type.Object({
  needsOwner: Type.Boolean(),
  signup: SignupMode,
  /**
   * The embedded start's demo account (`npm start`, docs/console.md "First run and the demo account"),
   * while it exists and is enabled: the first-run and sign-in pages offer to sign in with it. Never
   * set in a deployment (there is no demo account there).
   */
  demoAccount: Type.Optional(Type.Object({ email: Type.String() })),
});
export type SetupStatus = Static<typeof SetupStatus>;

export const CreateOwner = Type.Object({ email: Email, name: Name, password: NewPassword }, { additionalProperties: false });
export type CreateOwner = Static<typeof CreateOwner>;

export const Signup = Type.Object(
  { email: Email, name: Name, password: NewPassword, inviteToken: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);
export type Signup = Static<typeof Signup>;

export const SignIn = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: AnyPassword }, { additionalProperties: false });
export type SignIn = Static<typeof SignIn>;

/** The answer to setup, signup and sign-in: the session token, shown this once. */
export const SessionCreated = Type.Object({ token: Type.String(), expiresAt: DateTime, user: AccountUser });
export type SessionCreated = Static<typeof SessionCreated>;

export const ConsoleSessionInfo = Type.Object({ id: Uuid, createdAt: DateTime, expiresAt: DateTime, idleExpiresAt: DateTime });
export type ConsoleSessionInfo = Static<typeof ConsoleSessionInfo>;

export const CurrentSession = Type.Object({ user: AccountUser, session: ConsoleSessionInfo });
export type CurrentSession = Static<typeof CurrentSession>;

/** What the console's edge adds to a session's answers: the CSRF token, and SSRF_ALLOWLIST for the editor's warnings. */
const EdgeSessionFields = {
  csrfToken: Type.String({ description: 'Send it as X-CSRF-Token with every change made with the session cookie.' }),
  ssrfAllowlist: Type.String({ description: 'SSRF_ALLOWLIST as the engine has it (comma-separated): the editor does not warn about what it opens.' }),
};
/** The console's answer to setup, sign-up and sign-in (POST /api/v1/session...): the token is in the cookie, never here. */
export const OpenedConsoleSession = Type.Object({ user: AccountUser, expiresAt: DateTime, ...EdgeSessionFields });
export type OpenedConsoleSession = Static<typeof OpenedConsoleSession>;
/** The console's GET /api/v1/session: auth's current session, plus the edge's fields. */
export const CurrentConsoleSession = Type.Object({ user: AccountUser, session: ConsoleSessionInfo, ...EdgeSessionFields });
export type CurrentConsoleSession = Static<typeof CurrentConsoleSession>;

export const ChangePassword = Type.Object({ currentPassword: AnyPassword, newPassword: NewPassword }, { additionalProperties: false });
export type ChangePassword = Static<typeof ChangePassword>;

export const CreateInvite = Type.Object({ email: Email }, { additionalProperties: false });
export type CreateInvite = Static<typeof CreateInvite>;

export const CreatedInvite = Type.Object({ token: Type.String(), email: Type.String(), expiresAt: DateTime });
export type CreatedInvite = Static<typeof CreatedInvite>;

export const ListedUser = Type.Object({ id: Uuid, email: Type.String(), name: Type.String(), role: Role, disabled: Type.Boolean(), createdAt: DateTime });
export type ListedUser = Static<typeof ListedUser>;

export const UserList = Type.Object({ items: Type.Array(ListedUser) });
export type UserList = Static<typeof UserList>;

/** Owner only (CLI `flowdesk users create`, the console's Members page): a member with a first password. */
export const CreateUser = Type.Object({ email: Email, name: Name, password: NewPassword, role: Type.Optional(Role) }, { additionalProperties: false });
export type CreateUser = Static<typeof CreateUser>;
