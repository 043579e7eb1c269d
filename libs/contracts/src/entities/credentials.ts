import Type, { type Static } from 'typebox';
import { DateTime, StringEnum } from '../common.ts';
import { CREDENTIAL_TYPE_IDS, MAX_CREDENTIAL_VALUE_LENGTH } from '../credential-types.ts';

/**
 * Workflow credentials (docs/credentials.md): a named secret of one type (credential-types.ts): a
 * `secret` value a node refers to as `{{credentials.<name>}}`, or a typed credential (an API key in a
 * header, a bearer token, an SMTP server…) a node names in its `credential` field. The workflow engine
 * owns them; secret fields go in and never come out (the API says only whether each is set).
 */
export const CREDENTIAL_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
/** How many credentials one user may keep. */
export const MAX_CREDENTIALS_PER_USER = 200;

export const CredentialName = Type.String({
  pattern: CREDENTIAL_NAME_PATTERN,
  description: 'Letters, digits, _ and -, starting with a letter, at most 64: the <name> of {{credentials.<name>}}',
});

export const CredentialTypeSchema = StringEnum(CREDENTIAL_TYPE_IDS, { description: 'The credential type (docs/credentials.md, "Types"); default secret' });

/** How an OAuth2 credential stands (docs/credentials.md, "OAuth2"). */
export const CREDENTIAL_CONNECTION_STATES = ['not_connected', 'connected', 'needs_reconnect'] as const;
export const CredentialConnection = Type.Object(
  {
    status: StringEnum(CREDENTIAL_CONNECTION_STATES, {
      description: 'not_connected: Connect it first; connected: it holds a token; needs_reconnect: the provider refused its refresh token, Connect again',
    }),
    expiresAt: Type.Optional(DateTime),
    problem: Type.Optional(Type.String({ description: 'Why it needs reconnecting (the provider’s error)' })),
  },
  { additionalProperties: false },
);
export type CredentialConnection = Static<typeof CredentialConnection>;

/**
 * What anyone ever sees of a credential: its name, type, non-secret fields and dates; of each secret
 * field only whether it is set, never the value.
 */
export const Credential = Type.Object(
  {
    name: Type.String(),
    type: CredentialTypeSchema,
    fields: Type.Record(Type.String(), Type.String(), { description: 'The non-secret fields (a header name, an SMTP host)' }),
    secrets: Type.Record(Type.String(), Type.Boolean(), { description: 'Each secret field: whether it is set (its value is never returned)' }),
    connection: Type.Optional(CredentialConnection),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Credential', additionalProperties: false },
);
export type Credential = Static<typeof Credential>;

export const CredentialList = Type.Object({ credentials: Type.Array(Credential) }, { additionalProperties: false });
export type CredentialList = Static<typeof CredentialList>;

const Value = Type.String({
  minLength: 1,
  maxLength: MAX_CREDENTIAL_VALUE_LENGTH,
  description: "A secret credential's value; stored encrypted, never returned",
});
const Fields = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: MAX_CREDENTIAL_VALUE_LENGTH }), {
  maxProperties: 16,
  description: "The type's fields by key (secret ones stored encrypted, never returned)",
});

/** `{ name, value }` stores a secret credential (as before types); `{ name, type, fields }` any type. */
export const CreateCredential = Type.Object(
  { name: CredentialName, type: Type.Optional(CredentialTypeSchema), value: Type.Optional(Value), fields: Type.Optional(Fields) },
  { additionalProperties: false },
);
export type CreateCredential = Static<typeof CreateCredential>;

/** A new value (secret type) or fields; a secret field left out or empty keeps its stored value. The type never changes. */
export const UpdateCredential = Type.Object({ value: Type.Optional(Value), fields: Type.Optional(Fields) }, { additionalProperties: false });
export type UpdateCredential = Static<typeof UpdateCredential>;

export const CredentialNameParams = Type.Object({ name: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

/** POST /credentials/:name/connect: where to send the browser (the provider's consent page). */
export const CredentialConnectStart = Type.Object(
  { authorizeUrl: Type.String({ description: "The provider's authorization URL with state, PKCE challenge and redirect_uri" }) },
  { additionalProperties: false },
);
export type CredentialConnectStart = Static<typeof CredentialConnectStart>;

/** GET /credentials/oauth2/callback: the provider's answer to Connect. */
export const CredentialCallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 200 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: true },
);

/** POST /credentials/:name/test: whether the credential works, in a sentence. */
export const CredentialTestResult = Type.Object(
  { ok: Type.Boolean(), message: Type.String(), connection: Type.Optional(CredentialConnection) },
  { additionalProperties: false },
);
export type CredentialTestResult = Static<typeof CredentialTestResult>;
