import { HttpError, MAX_CREDENTIALS_PER_USER, notFound, type Credential } from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import type { SecretBox } from '@flowdesk/service-kit';
import type { CredentialResolver } from '../domain/ports.ts';

interface Row {
  name: string;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (d: Date | string) => new Date(d).toISOString();
const toCredential = (r: Row): Credential => ({ name: r.name, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) });
const METADATA = 'name, created_at, updated_at';

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

  async list(userId: string): Promise<Credential[]> {
    const rows = await this.db.queryAsUser<Row>(userId, `SELECT ${METADATA} FROM "engine"."credential" ORDER BY name`);
    return rows.map(toCredential);
  }

  async create(userId: string, name: string, value: string): Promise<Credential> {
    const sealed = this.sealer().seal(value);
    // The count and the insert in one statement: a user at the limit gets no row (answered 409).
    const rows = await this.db
      .queryAsUser<Row>(
        userId,
        `INSERT INTO "engine"."credential" (name, value_sealed)
         SELECT $1, $2 WHERE (SELECT count(*) FROM "engine"."credential") < $3
         RETURNING ${METADATA}`,
        [name, sealed, MAX_CREDENTIALS_PER_USER],
      )
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505')
          throw new HttpError('conflict', `A credential named "${name}" already exists; replace its value instead`);
        throw err;
      });
    if (rows.length === 0) throw new HttpError('conflict', `At most ${MAX_CREDENTIALS_PER_USER} credentials per user; delete one first`);
    return toCredential(rows[0]!);
  }

  async update(userId: string, name: string, value: string): Promise<Credential> {
    const sealed = this.sealer().seal(value);
    const rows = await this.db.queryAsUser<Row>(
      userId,
      `UPDATE "engine"."credential" SET value_sealed = $2, updated_at = CURRENT_TIMESTAMP WHERE name = $1 RETURNING ${METADATA}`,
      [name, sealed],
    );
    if (rows.length === 0) throw notFound('Credential');
    return toCredential(rows[0]!);
  }

  async delete(userId: string, name: string): Promise<void> {
    const rows = await this.db.queryAsUser(userId, 'DELETE FROM "engine"."credential" WHERE name = $1 RETURNING id', [name]);
    if (rows.length === 0) throw notFound('Credential');
  }

  /**
   * The plaintext of the owner's credentials among `names` (one query, only when a workflow refers to
   * some). A name that is not there is simply absent: the template names it in the run's error.
   */
  async resolve(ownerId: string, names: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (names.length === 0) return out;
    const box = this.sealer();
    const rows = await this.db.queryAsUser<{ name: string; value_sealed: string }>(
      ownerId,
      'SELECT name, value_sealed FROM "engine"."credential" WHERE name = ANY($1::text[])',
      [[...names]],
    );
    for (const r of rows) out.set(r.name, box.open(r.value_sealed));
    return out;
  }
}
