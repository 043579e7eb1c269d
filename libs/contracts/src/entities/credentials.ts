import Type, { type Static } from 'typebox';
import { DateTime } from '../common.ts';

/**
 * Workflow credentials (docs/credentials.md): a named secret a node refers to as
 * `{{credentials.<name>}}`. The workflow engine owns them; the value goes in and never comes out.
 */
export const CREDENTIAL_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
/** The longest value accepted, in characters (a long JWT or PEM key fits). */
export const MAX_CREDENTIAL_VALUE_LENGTH = 8192;
/** How many credentials one user may keep. */
export const MAX_CREDENTIALS_PER_USER = 200;

export const CredentialName = Type.String({
  pattern: CREDENTIAL_NAME_PATTERN,
  description: 'Letters, digits, _ and -, starting with a letter, at most 64: the <name> of {{credentials.<name>}}',
});

/** What anyone ever sees of a credential: its name and dates, never the value. */
export const Credential = Type.Object({ name: Type.String(), createdAt: DateTime, updatedAt: DateTime }, { $id: 'Credential', additionalProperties: false });
export type Credential = Static<typeof Credential>;

export const CredentialList = Type.Object({ credentials: Type.Array(Credential) }, { additionalProperties: false });
export type CredentialList = Static<typeof CredentialList>;

const Value = Type.String({ minLength: 1, maxLength: MAX_CREDENTIAL_VALUE_LENGTH, description: 'The secret; stored encrypted, never returned' });

export const CreateCredential = Type.Object({ name: CredentialName, value: Value }, { additionalProperties: false });
export type CreateCredential = Static<typeof CreateCredential>;

export const UpdateCredential = Type.Object({ value: Value }, { additionalProperties: false });
export type UpdateCredential = Static<typeof UpdateCredential>;

export const CredentialNameParams = Type.Object({ name: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
