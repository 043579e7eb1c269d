import {
  checkCredentialFields,
  credentialType,
  DEFAULT_CREDENTIAL_TYPE,
  HttpError,
  MAX_CREDENTIALS_PER_USER,
  notFound,
  type CreateCredential,
  type Credential,
  type CredentialType,
  type UpdateCredential,
} from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import type { SecretBox } from '@flowdesk/service-kit';
import type { CredentialResolver, CredentialValue } from '../domain/ports.ts';

interface Row {
  name: string;
  type: string;
  value_sealed: string;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (d: Date | string) => new Date(d).toISOString();
const METADATA = 'name, type, value_sealed, created_at, updated_at';

/**
 * Sealed form: a `secret` credential's value as is (the form every credential had before types, so old
 * rows open unchanged); any other type's whole fields object as JSON.
 */
const sealedText = (type: string, fields: Record<string, string>) => (type === 'secret' ? fields.value! : JSON.stringify(fields));
const openedFields = (type: string, plain: string): Record<string, string> =>
  type === 'secret' ? { value: plain } : (JSON.parse(plain) as Record<string, string>);

/** The store is not configured (no CREDENTIALS_KEY): answered 503 by the API, a failed run by the engine. */
export class CredentialsUnavailableError extends Error {
  constructor() {
    super('the credentials store is not configured on this server (CREDENTIALS_KEY)');
  }
}

/**
 * Workflow credentials on the engine's own schema (docs/credentials.md). Every statement runs as the
 * owner under row-level security (db.queryAsUser), so one user's name never finds another's value.
 * Values are sealed with the SecretBox before they reach the database and opened only by `resolve`,
 * which the executor calls at run time; nothing here returns a value to an API caller.
 */
export class CredentialStore implements CredentialResolver {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox | undefined,
  ) {}

  get configured(): boolean {
    return this.box !== undefined;
  }

  private sealer(): SecretBox {
    if (!this.box) throw new CredentialsUnavailableError();
    return this.box;
  }

  /**
   * What the API shows: the non-secret fields and, per secret field, whether it is set. A typed
   * credential's fields are sealed whole, so they are opened here (in memory, secrets dropped at once).
   */
  private toCredential(r: Row): Credential {
    const def = credentialType(r.type);
    const base = { name: r.name, type: r.type as CredentialType, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) };
    if (!def || !this.box) return { ...base, fields: {}, secrets: {} };
    const all = r.type === 'secret' ? { value: '(set)' } : openedFields(r.type, this.box.open(r.value_sealed));
    const fields: Record<string, string> = {};
    const secrets: Record<string, boolean> = {};
    for (const f of def.fields) {
      if (f.secret) secrets[f.key] = (all[f.key] ?? '') !== '';
      else if (all[f.key] !== undefined) fields[f.key] = all[f.key]!;
    }
    return { ...base, fields, secrets };
  }

  async list(userId: string): Promise<Credential[]> {
    const rows = await this.db.queryAsUser<Row>(userId, `SELECT ${METADATA} FROM "engine"."credential" ORDER BY name`);
    return rows.map((r) => this.toCredential(r));
  }

  async create(userId: string, body: CreateCredential): Promise<Credential> {
    const { name } = body;
    const type = body.type ?? DEFAULT_CREDENTIAL_TYPE;
    const fields = checkedFields(type, body);
    const sealed = this.sealer().seal(sealedText(type, fields));
    // The count and the insert in one statement: a user at the limit gets no row (answered 409).
    const rows = await this.db
      .queryAsUser<Row>(
        userId,
        `INSERT INTO "engine"."credential" (name, value_sealed, type)
         SELECT $1, $2, $4 WHERE (SELECT count(*) FROM "engine"."credential") < $3
         RETURNING ${METADATA}`,
        [name, sealed, MAX_CREDENTIALS_PER_USER, type],
      )
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505')
          throw new HttpError('conflict', `A credential named "${name}" already exists; replace its value instead`);
        throw err;
      });
    if (rows.length === 0) throw new HttpError('conflict', `At most ${MAX_CREDENTIALS_PER_USER} credentials per user; delete one first`);
    return this.toCredential(rows[0]!);
  }

  /** New fields (or a secret credential's new value); secret fields left out keep theirs. The type stays. */
  async update(userId: string, name: string, body: UpdateCredential): Promise<Credential> {
    const box = this.sealer();
    const [current] = await this.db.queryAsUser<Row>(userId, `SELECT ${METADATA} FROM "engine"."credential" WHERE name = $1`, [name]);
    if (!current) throw notFound('Credential');
    const fields = checkedFields(current.type, body, openedFields(current.type, box.open(current.value_sealed)));
    const rows = await this.db.queryAsUser<Row>(
      userId,
      `UPDATE "engine"."credential" SET value_sealed = $2, updated_at = CURRENT_TIMESTAMP WHERE name = $1 AND type = $3 RETURNING ${METADATA}`,
      [name, box.seal(sealedText(current.type, fields)), current.type],
    );
    if (rows.length === 0) throw notFound('Credential');
    return this.toCredential(rows[0]!);
  }

  async delete(userId: string, name: string): Promise<void> {
    const rows = await this.db.queryAsUser(userId, 'DELETE FROM "engine"."credential" WHERE name = $1 RETURNING id', [name]);
    if (rows.length === 0) throw notFound('Credential');
  }

  /**
   * The plaintext of the owner's credentials among `names` (one query, only when a workflow refers to
   * some). A name that is not there is simply absent: the template names it in the run's error.
   */
  async resolve(ownerId: string, names: readonly string[]): Promise<Map<string, CredentialValue>> {
    const out = new Map<string, CredentialValue>();
    if (names.length === 0) return out;
    const box = this.sealer();
    const rows = await this.db.queryAsUser<{ name: string; type: string; value_sealed: string }>(
      ownerId,
      'SELECT name, type, value_sealed FROM "engine"."credential" WHERE name = ANY($1::text[])',
      [[...names]],
    );
    for (const r of rows) {
      const plain = box.open(r.value_sealed);
      out.set(r.name, r.type === 'secret' ? plain : { type: r.type, fields: openedFields(r.type, plain) });
    }
    return out;
  }
}

/**
 * The fields a create or replace stores, checked against the type (400 naming the field). A secret
 * credential takes `value` (as before types) or `fields.value`; the other types take `fields` only.
 */
function checkedFields(type: string, body: { value?: string; fields?: Record<string, string> }, previous?: Record<string, string>): Record<string, string> {
  if (body.value !== undefined && type !== 'secret')
    throw new HttpError('validation_failed', `body.value is for secret credentials; a ${type} credential takes body.fields`);
  const input = body.value !== undefined ? { ...body.fields, value: body.value } : (body.fields ?? {});
  if (!previous && type === 'secret' && !input.value) throw new HttpError('validation_failed', 'body.value is required');
  const checked = checkCredentialFields(type, input, previous);
  if (!checked.ok) throw new HttpError('validation_failed', `body.${checked.field}: ${checked.message}`);
  return checked.fields;
}
