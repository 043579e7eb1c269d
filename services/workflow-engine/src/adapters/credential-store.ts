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
import { createHash, randomBytes } from 'node:crypto';
import type { CredentialConnection, CredentialTestResult } from '@flowdesk/contracts';
import type { CredentialResolver, CredentialValue, TypedCredential } from '../domain/ports.ts';
import { OAuth2Client, OAuth2RefusedError, pkceChallenge, pkceVerifier, type OAuth2ClientConfig, type TokenSet } from './oauth2-client.ts';

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

/** How long a Connect may take, from the console's click to the provider's redirect back. */
export const OAUTH2_CONNECT_TTL_MS = 10 * 60_000;
/** A token this close to its expiry is refreshed before use. */
export const OAUTH2_EXPIRY_SKEW_MS = 30_000;
/** How long one replica holds an OAuth2 credential's refresh while it asks the token URL. */
export const OAUTH2_REFRESH_LEASE_MS = 15_000;
const REFRESH_POLL_MS = 50;

/**
 * An OAuth2 credential cannot give a token (docs/credentials.md, "OAuth2"): never connected, or the
 * provider refused its refresh token (it is then marked needs_reconnect). The message names it and
 * says what to do.
 */
export class CredentialNeedsConnectError extends Error {}

/** What the OAuth2 part of the store needs: the token endpoint client, the clock, the callback URL the provider sends the browser back to. */
export interface OAuth2Options {
  client: OAuth2Client;
  clock?: () => Date;
  /** `<public base URL>/api/v1/credentials/oauth2/callback`; absent (no PUBLIC_BASE_URL), Connect is refused. */
  callbackUrl?: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
// An OAuth2 credential's sealed JSON also keeps its state beside the registry's fields: the tokens,
// expiresAt, status / problem (needs_reconnect), a Connect's pendingState (SHA-256) / pendingVerifier /
// pendingUntil, a refresh's lease refreshingUntil. A replacement keeps only the registry's fields, so
// it disconnects the credential (docs/credentials.md, "OAuth2").
const oauth2Config = (f: Record<string, string>): OAuth2ClientConfig => ({
  tokenUrl: f.tokenUrl!,
  clientId: f.clientId!,
  ...(f.clientSecret ? { clientSecret: f.clientSecret } : {}),
  ...(f.scopes ? { scopes: f.scopes } : {}),
  ...(f.audience ? { audience: f.audience } : {}),
});
const without = (f: Record<string, string>, ...keys: string[]) => Object.fromEntries(Object.entries(f).filter(([k]) => !keys.includes(k)));

/** An OAuth2 credential's standing, as the API shows it. */
function connectionOf(f: Record<string, string>): CredentialConnection {
  if (f.status === 'needs_reconnect') return { status: 'needs_reconnect', ...(f.problem ? { problem: f.problem } : {}) };
  if (!f.accessToken) return { status: 'not_connected' };
  return { status: 'connected', ...(f.expiresAt ? { expiresAt: f.expiresAt } : {}) };
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
    private readonly oauth2?: OAuth2Options,
  ) {}

  private now(): number {
    return (this.oauth2?.clock ?? (() => new Date()))().getTime();
  }

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
    return { ...base, fields, secrets, ...(r.type === 'oauth2' ? { connection: connectionOf(all) } : {}) };
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
      if (r.type === 'oauth2') out.set(r.name, await this.resolveOAuth2(ownerId, r.name, openedFields(r.type, plain)));
      else out.set(r.name, r.type === 'secret' ? plain : { type: r.type, fields: openedFields(r.type, plain) });
    }
    return out;
  }

  /**
   * An OAuth2 credential as a run uses it: with a valid access token (refreshed now when it has
   * expired), and `refresh` for a 401; when it cannot give one, `problem` says why, and the step that
   * names it fails with that (the run's other steps are not affected).
   */
  private async resolveOAuth2(ownerId: string, name: string, stored: Record<string, string>): Promise<TypedCredential> {
    const refresh = async (refused: string) => this.oauth2Token(ownerId, name, { refused });
    try {
      return { type: 'oauth2', fields: await this.oauth2Token(ownerId, name), refresh };
    } catch (err) {
      return { type: 'oauth2', fields: without(stored, 'accessToken'), problem: (err as Error).message };
    }
  }

  private async readRow(userId: string, name: string): Promise<Row | undefined> {
    const [row] = await this.db.queryAsUser<Row>(userId, `SELECT ${METADATA} FROM "engine"."credential" WHERE name = $1`, [name]);
    return row;
  }

  /** Replaces the sealed value only if it is still `expected` (the compare-and-set of every OAuth2 write). */
  private async swap(userId: string, name: string, expected: string, fields: Record<string, string>): Promise<string | null> {
    const sealed = this.sealer().seal(JSON.stringify(fields));
    const rows = await this.db.queryAsUser(
      userId,
      `UPDATE "engine"."credential" SET value_sealed = $3, updated_at = CURRENT_TIMESTAMP WHERE name = $1 AND value_sealed = $2 RETURNING id`,
      [name, expected, sealed],
    );
    return rows.length === 1 ? sealed : null;
  }

  private async oauth2Row(userId: string, name: string): Promise<{ row: Row; fields: Record<string, string> }> {
    const row = await this.readRow(userId, name);
    if (!row) throw notFound('Credential');
    if (row.type !== 'oauth2') throw new HttpError('validation_failed', `credential "${name}" is of type ${row.type}: only an OAuth2 credential connects`);
    return { row, fields: openedFields(row.type, this.sealer().open(row.value_sealed)) };
  }

  /**
   * Starts Connect (authorization code with PKCE): a state and verifier kept sealed in the credential
   * for OAUTH2_CONNECT_TTL_MS (bound to this user by row-level security: the callback finds it only as
   * the same user), and the provider's URL to send the browser to.
   */
  async connectStart(userId: string, name: string): Promise<{ authorizeUrl: string }> {
    const callbackUrl = this.oauth2?.callbackUrl;
    if (!callbackUrl)
      throw new HttpError('unavailable', 'Connect needs the public base URL of this server (PUBLIC_BASE_URL), for the provider to send you back');
    const { row, fields } = await this.oauth2Row(userId, name);
    if (fields.grant === 'client_credentials')
      throw new HttpError('validation_failed', `credential "${name}" uses client credentials: it needs no Connect (Test it instead)`);
    const state = `${name}.${randomBytes(24).toString('base64url')}`;
    const verifier = pkceVerifier();
    const next = {
      ...fields,
      pendingState: sha256(state),
      pendingVerifier: verifier,
      pendingUntil: new Date(this.now() + OAUTH2_CONNECT_TTL_MS).toISOString(),
    };
    if (!(await this.swap(userId, name, row.value_sealed, next))) throw new HttpError('conflict', `credential "${name}" changed meanwhile: try again`);
    const url = new URL(fields.authorizeUrl!);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: fields.clientId!,
      redirect_uri: callbackUrl,
      state,
      code_challenge: pkceChallenge(verifier),
      code_challenge_method: 'S256',
      ...(fields.scopes ? { scope: fields.scopes } : {}),
      ...(fields.audience ? { audience: fields.audience } : {}),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { authorizeUrl: url.href };
  }

  /**
   * The provider's redirect back: the state must be the one this user's Connect stored, not expired
   * and not used (it is cleared here); the code is exchanged with the verifier and the tokens stored
   * sealed. Answers the credential's name, or throws with what to tell the person.
   */
  async connectFinish(userId: string, query: { state?: string; code?: string; error?: string; error_description?: string }): Promise<string> {
    const state = query.state ?? '';
    const name = state.slice(0, Math.max(0, state.indexOf('.')));
    const expired = () => new HttpError('validation_failed', 'This Connect has expired or was already used: choose Connect again');
    if (!name) throw expired();
    const { row, fields } = await this.oauth2Row(userId, name).catch(() => {
      throw expired();
    });
    if (!fields.pendingState || fields.pendingState !== sha256(state) || Date.parse(fields.pendingUntil ?? '') <= this.now()) throw expired();
    const cleared = without(fields, 'pendingState', 'pendingVerifier', 'pendingUntil');
    const claimed = await this.swap(userId, name, row.value_sealed, cleared);
    if (!claimed) throw expired();
    if (query.error || !query.code) {
      const why = query.error ? `${query.error.slice(0, 100)}${query.error_description ? `: ${query.error_description.slice(0, 300)}` : ''}` : 'no code';
      throw new HttpError('validation_failed', `The provider did not connect "${name}" (${why})`);
    }
    let tokens: TokenSet;
    try {
      tokens = await this.oauth2!.client.exchangeCode(oauth2Config(fields), query.code, fields.pendingVerifier!, this.oauth2!.callbackUrl!);
    } catch (err) {
      throw new HttpError('validation_failed', `Connecting "${name}" failed: ${(err as Error).message}`);
    }
    await this.swap(userId, name, claimed, this.withTokens(cleared, tokens));
    return name;
  }

  private withTokens(fields: Record<string, string>, tokens: TokenSet): Record<string, string> {
    const next: Record<string, string> = {
      ...without(fields, 'refreshingUntil', 'problem', 'expiresAt'),
      accessToken: tokens.accessToken,
      status: 'connected',
    };
    if (tokens.refreshToken) next.refreshToken = tokens.refreshToken;
    if (tokens.expiresAt) next.expiresAt = tokens.expiresAt;
    return next;
  }

  /**
   * An OAuth2 credential's fields with an access token that is valid now: the stored one, or a new one
   * (a refresh, or the client credentials grant) when it has expired or is `refused` (the server
   * answered 401 with it). One refresh at a time across replicas: the refresher first takes a lease in
   * the sealed value by compare-and-set; the others wait for its outcome and use the token it stored,
   * so a rotating refresh token is never spent twice. A refused refresh token marks the credential
   * needs_reconnect (CredentialNeedsConnectError).
   */
  async oauth2Token(ownerId: string, name: string, opts: { refused?: string; force?: boolean } = {}): Promise<Record<string, string>> {
    const client = this.oauth2?.client;
    if (!client) throw new CredentialsUnavailableError();
    const reconnect = (why: string) =>
      new CredentialNeedsConnectError(`credential "${name}" needs reconnecting (${why}): Connect it again under Settings → Credentials`);
    let force = opts.force ?? false;
    for (;;) {
      const { row, fields } = await this.oauth2Row(ownerId, name);
      const now = this.now();
      if (fields.status === 'needs_reconnect') throw reconnect(fields.problem ?? 'the provider refused it');
      const usable =
        !!fields.accessToken && fields.accessToken !== opts.refused && (!fields.expiresAt || Date.parse(fields.expiresAt) - OAUTH2_EXPIRY_SKEW_MS > now);
      if (usable && !force) return fields;
      const clientGrant = fields.grant === 'client_credentials';
      if (!clientGrant && !fields.refreshToken) {
        if (!fields.accessToken) throw new CredentialNeedsConnectError(`credential "${name}" is not connected: Connect it under Settings → Credentials`);
        if (usable) return fields;
        throw reconnect('its access token expired and the provider gave no refresh token');
      }
      if (fields.refreshingUntil && Date.parse(fields.refreshingUntil) > now) {
        // Another run (here or on another replica) is refreshing it: its outcome is read on the next turn.
        await new Promise((r) => setTimeout(r, REFRESH_POLL_MS));
        force = false;
        continue;
      }
      const leased = await this.swap(ownerId, name, row.value_sealed, { ...fields, refreshingUntil: new Date(now + OAUTH2_REFRESH_LEASE_MS).toISOString() });
      if (!leased) continue;
      let tokens: TokenSet;
      try {
        tokens = clientGrant ? await client.clientCredentials(oauth2Config(fields)) : await client.refresh(oauth2Config(fields), fields.refreshToken!);
      } catch (err) {
        if (err instanceof OAuth2RefusedError && !clientGrant) {
          await this.swap(ownerId, name, leased, {
            ...without(fields, 'accessToken', 'refreshToken', 'expiresAt', 'refreshingUntil'),
            status: 'needs_reconnect',
            problem: `the provider refused its refresh token: ${err.code}`,
          });
          throw reconnect(`the provider refused its refresh token: ${err.code}`);
        }
        await this.swap(ownerId, name, leased, without(fields, 'refreshingUntil'));
        throw new Error(`credential "${name}": getting a new access token failed: ${(err as Error).message}`, { cause: err });
      }
      const next = this.withTokens(fields, tokens);
      // Lost only if the credential was replaced meanwhile: the tokens are still good for this use.
      await this.swap(ownerId, name, leased, next);
      return next;
    }
  }

  /** The Test button (docs/credentials.md, "Test"): for OAuth2, a valid token (refreshed, or fetched with the client credentials). */
  async test(userId: string, name: string): Promise<CredentialTestResult> {
    const row = await this.readRow(userId, name);
    if (!row) throw notFound('Credential');
    const def = credentialType(row.type);
    if (!def?.test) throw new HttpError('validation_failed', `a ${row.type} credential has no test (docs/credentials.md, "Test")`);
    try {
      const fields = await this.oauth2Token(userId, name, { force: true });
      const until = fields.expiresAt ? `, valid until ${fields.expiresAt}` : '';
      return { ok: true, message: `The provider gave an access token${until}.`, connection: connectionOf(fields) };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      const after = await this.readRow(userId, name);
      const fields = after ? openedFields(after.type, this.sealer().open(after.value_sealed)) : {};
      return { ok: false, message: (err as Error).message, connection: connectionOf(fields) };
    }
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
