/** The console's only way to the server: the public API at /api/v1, with the session cookie. */
import type {
  AccountUser,
  ListWorkflowsQuery,
  ApiKey,
  ApiKeyList,
  ConnectedApp,
  ConnectedAppList,
  CreatedApiKey,
  CreatedInvite,
  CreatedWorkflow,
  CreateWorkflow,
  CreateCredential,
  Credential,
  CredentialConnectStart,
  CredentialList,
  CredentialTestResult,
  UpdateCredential,
  CurrentSession,
  DryRun,
  DryRunResult,
  KeyAccess,
  ListedUser,
  PageOf,
  PinSample,
  Project,
  SetupStatus,
  StepTestResult,
  TestStep,
  UpdateWorkflow,
  UserList,
  WebhookSecret,
  WebhookSecretSet,
  Workflow,
  WorkflowExport,
  WorkflowImportResult,
  WorkflowRun,
  WorkflowVersion,
  WorkflowVersionSummary,
} from '@flowdesk/contracts';

// The API's shapes are the contracts' (libs/contracts), imported as types only: nothing is added to
// the bundle, and a change of a contract is a compile error here rather than a page that breaks.
export type {
  ApiKey,
  DryRunResult,
  ConnectedApp,
  CreatedApiKey,
  Credential,
  ListedUser,
  PageOf,
  Project,
  StepTestResult,
  Workflow,
  WorkflowExport,
  WorkflowImportResult,
  WorkflowVersion,
  WorkflowVersionSummary,
};
export type { RunStep, WorkflowRun } from '@flowdesk/contracts';

export type User = AccountUser;
/** GET /session: the signed-in user and session, plus the CSRF token the edge adds (docs/console.md). */
export type SessionInfo = Pick<CurrentSession, 'user'> &
  Partial<Pick<CurrentSession, 'session'>> & {
    csrfToken: string;
    /** The operator's SSRF_ALLOWLIST (comma-separated; '' for none): the editor's private-URL warning skips what it opens. */
    ssrfAllowlist?: string;
  };
/** GET /setup: whether the owner is still to be created, the sign-up mode, and (npm start) the demo account. */
export type SetupState = SetupStatus;
export type Invite = CreatedInvite;
/** PATCH /workflows/:id. */
export type WorkflowChange = UpdateWorkflow;

/** An answer that was not a success, with the server's `{error, message}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const isCsrfRefusal = (e: ApiError) => e.status === 403 && /csrf/i.test(e.message);

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * Every change carries X-CSRF-Token (the session's token, from sign-in or GET /session). When the
 * server refuses the token (a sign-in in another tab replaced the session), the client fetches the
 * current token once and repeats the request once.
 */
export class ApiClient {
  private csrfToken: string | undefined;
  /** The signed-in user (from the last session read or sign-in): "Manual by <you>" in the runs panel. */
  currentUser: User | null = null;
  /** SSRF_ALLOWLIST, from the last session read or sign-in. */
  ssrfAllowlist = '';
  /** Called when the server says the session is gone (401 on a console call). */
  onSignedOut: (() => void) | undefined;

  constructor(
    private readonly fetchImpl: Fetch = (input, init) => fetch(input, init),
    private readonly base = '/api/v1',
  ) {}

  setCsrfToken(token: string | undefined): void {
    this.csrfToken = token;
  }

  async request<T>(method: string, path: string, body?: unknown, extra?: { headers?: Record<string, string> }, retried = false): Promise<T> {
    const headers: Record<string, string> = { ...extra?.headers, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (WRITES.has(method) && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    const res = await this.fetchImpl(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (res.ok) {
      if (res.status === 204) return undefined as T;
      const text = await res.text();
      return (text ? JSON.parse(text) : undefined) as T;
    }
    const err = await toError(res);
    if (!retried && WRITES.has(method) && isCsrfRefusal(err)) {
      const current = await this.session().catch(() => undefined);
      if (current) return this.request<T>(method, path, body, extra, true);
    }
    if (err.status === 401 && path !== '/session' && this.onSignedOut) this.onSignedOut();
    throw err;
  }

  /** The signed-in user, or null when there is no session. Keeps the CSRF token. */
  async session(): Promise<SessionInfo | null> {
    try {
      const info = await this.request<SessionInfo>('GET', '/session');
      this.csrfToken = info.csrfToken;
      this.currentUser = info.user;
      this.ssrfAllowlist = info.ssrfAllowlist ?? '';
      return info;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        this.csrfToken = undefined;
        this.currentUser = null;
        return null;
      }
      throw err;
    }
  }

  setup = () => this.request<SetupState>('GET', '/setup');
  createOwner = (input: { email: string; name: string; password: string }) => this.opened(this.request('POST', '/setup', input));
  signUp = (input: { email: string; name: string; password: string; inviteToken?: string }) => this.opened(this.request('POST', '/signup', input));
  signIn = (input: { email: string; password: string }) => this.opened(this.request('POST', '/session', input));

  async signOut(): Promise<void> {
    await this.request('DELETE', '/session');
    this.csrfToken = undefined;
  }

  async signOutEverywhere(): Promise<void> {
    await this.request('DELETE', '/session/all');
    this.csrfToken = undefined;
  }

  changePassword = (currentPassword: string, newPassword: string) => this.request<void>('POST', '/account/password', { currentPassword, newPassword });
  listApiKeys = () => this.request<ApiKeyList>('GET', '/api-keys').then((r) => r.items);
  createApiKey = (name: string, scope: KeyAccess) => this.request<CreatedApiKey>('POST', '/api-keys', { name, scope });
  revokeApiKey = (id: string) => this.request<void>('DELETE', `/api-keys/${encodeURIComponent(id)}`);
  listCredentials = () => this.request<CredentialList>('GET', '/credentials').then((r) => r.credentials);
  createCredential = (body: CreateCredential) => this.request<Credential>('POST', '/credentials', body);
  replaceCredential = (name: string, body: UpdateCredential) => this.request<Credential>('PUT', `/credentials/${encodeURIComponent(name)}`, body);
  deleteCredential = (name: string) => this.request<void>('DELETE', `/credentials/${encodeURIComponent(name)}`);
  /** OAuth2 Connect: the provider's consent URL to send the browser to (docs/credentials.md, "OAuth2"). */
  connectCredential = (name: string) => this.request<CredentialConnectStart>('POST', `/credentials/${encodeURIComponent(name)}/connect`);
  /** The Test button: whether the credential works, in a sentence. */
  testCredential = (name: string) => this.request<CredentialTestResult>('POST', `/credentials/${encodeURIComponent(name)}/test`);
  listConnectedApps = () => this.request<ConnectedAppList>('GET', '/connected-apps').then((r) => r.items);
  revokeConnectedApp = (id: string) => this.request<void>('DELETE', `/connected-apps/${encodeURIComponent(id)}`);
  listUsers = () => this.request<UserList>('GET', '/users').then((r) => r.items);
  /** Owner only: signs the person out everywhere; their keys and apps stop working until enabled again. */
  disableUser = (id: string) => this.request<void>('POST', `/users/${encodeURIComponent(id)}/disable`);
  enableUser = (id: string) => this.request<void>('POST', `/users/${encodeURIComponent(id)}/enable`);
  invite = (email: string) => this.request<Invite>('POST', '/invites', { email });

  /**
   * A page of the workflows matching the filters, in the server's order (ListWorkflowsQuery): `q`
   * searches name, description and tags, `tag` filters by one, `sort` orders; `cursor` is the previous page's nextCursor.
   */
  listWorkflows = (query: Pick<ListWorkflowsQuery, 'q' | 'triggerType' | 'active' | 'tag' | 'sort' | 'cursor'> = {}) => {
    const params = new URLSearchParams({ limit: '100' });
    if (query.q) params.set('q', query.q);
    if (query.triggerType) params.set('triggerType', query.triggerType);
    if (query.active !== undefined) params.set('active', String(query.active));
    if (query.tag) params.set('tag', query.tag);
    if (query.sort && query.sort !== 'created') params.set('sort', query.sort);
    if (query.cursor) params.set('cursor', query.cursor);
    return this.request<PageOf<Workflow>>('GET', `/workflows?${params.toString()}`);
  };
  getWorkflow = (id: string) => this.request<Workflow>('GET', `/workflows/${encodeURIComponent(id)}`);
  createWorkflow = (input: CreateWorkflow) => this.request<CreatedWorkflow>('POST', '/workflows', input);
  updateWorkflow = (id: string, change: WorkflowChange) => this.request<Workflow>('PATCH', `/workflows/${encodeURIComponent(id)}`, change);
  deleteWorkflow = (id: string) => this.request<void>('DELETE', `/workflows/${encodeURIComponent(id)}`);
  /** The workflow as a file (docs/workflow-export.md): no secrets, credentials by name. */
  exportWorkflow = (id: string) => this.request<WorkflowExport>('GET', `/workflows/${encodeURIComponent(id)}/export`);
  /** A file (parsed JSON) as a new, inactive workflow; the answer says what it could not take, per step. */
  importWorkflow = (file: unknown) => this.request<WorkflowImportResult>('POST', '/workflows/import', file);
  /** One page of the workflow's versions, newest first (docs/workflow-versions.md). */
  listWorkflowVersions = (id: string, cursor?: string | null) =>
    this.request<PageOf<WorkflowVersionSummary>>(
      'GET',
      `/workflows/${encodeURIComponent(id)}/versions?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
  getWorkflowVersion = (id: string, n: number) => this.request<WorkflowVersion>('GET', `/workflows/${encodeURIComponent(id)}/versions/${n}`);
  /** Version `n`'s definition back, saved as a new version ("Restored version n"); answers the workflow. */
  restoreWorkflowVersion = (id: string, n: number) => this.request<Workflow>('POST', `/workflows/${encodeURIComponent(id)}/versions/${n}/restore`);
  webhookSecret = (id: string) => this.request<WebhookSecret>('GET', `/workflows/${encodeURIComponent(id)}/webhook-secret`);
  regenerateWebhookSecret = (id: string) => this.request<WebhookSecret>('POST', `/workflows/${encodeURIComponent(id)}/webhook-secret/regenerate`);
  /** A signing secret of the sender's choosing (whsec_…): the answer holds only its last four characters. */
  setWebhookSecret = (id: string, secret: string) => this.request<WebhookSecretSet>('PUT', `/workflows/${encodeURIComponent(id)}/webhook-secret`, { secret });
  listRuns = (workflowId: string, limit = 100) =>
    this.request<PageOf<WorkflowRun>>('GET', `/workflows/${encodeURIComponent(workflowId)}/runs?limit=${limit}`).then((r) => r.items);
  /**
   * Run now (POST /workflows/:id/runs): a queued run. The same `idempotencyKey` answers the same run,
   * so a double click or a retried request starts one run, not two.
   */
  runWorkflow = (id: string, payload: Record<string, unknown>, idempotencyKey: string) =>
    this.request<WorkflowRun>('POST', `/workflows/${encodeURIComponent(id)}/runs`, { payload }, { headers: { 'idempotency-key': idempotencyKey } });
  /** Run this step (POST /workflows/:id/test-step): one node once against a sample; records no run. */
  testStep = (workflowId: string, body: TestStep) => this.request<StepTestResult>('POST', `/workflows/${encodeURIComponent(workflowId)}/test-step`, body);
  /** Pins the workflow's sample (docs/console.md, "Pinned sample"): previews, Run now and Run this step start from it. */
  pinSample = (workflowId: string, body: PinSample) => this.request<Workflow>('PUT', `/workflows/${encodeURIComponent(workflowId)}/sample`, body);
  unpinSample = (workflowId: string) => this.request<Workflow>('DELETE', `/workflows/${encodeURIComponent(workflowId)}/sample`);
  /** The dry run of the editor's graph on the sample (the engine executes no action): each step's output. */
  dryRun = (workflowId: string, body: DryRun) => this.request<DryRunResult>('POST', `/workflows/${encodeURIComponent(workflowId)}/dry-run`, body);
  listProjects = () => this.request<PageOf<Project>>('GET', '/projects?limit=100').then((r) => r.items);
  /**
   * Names of stored secret credentials (the ones written {{credentials.<name>}}; typed ones are named in
   * a node's Credential field), or null when this deployment has no credential store (not 200).
   */
  listCredentialNames = () =>
    this.listCredentials().then(
      (credentials) => credentials.filter((c) => c.type === 'secret').map((c) => c.name),
      () => null,
    );

  private async opened(answer: Promise<unknown>): Promise<SessionInfo> {
    const body = (await answer) as { user: User; csrfToken: string; ssrfAllowlist?: string };
    this.csrfToken = body.csrfToken;
    this.currentUser = body.user;
    this.ssrfAllowlist = body.ssrfAllowlist ?? '';
    return { user: body.user, csrfToken: body.csrfToken };
  }
}

async function toError(res: Response): Promise<ApiError> {
  let code = 'error';
  let message = `The server answered ${res.status}`;
  try {
    const body = (await res.json()) as { error?: string; message?: string };
    if (body.error) code = body.error;
    if (body.message) message = body.message;
  } catch {
    // not JSON: keep the generic message
  }
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

export const api = new ApiClient();
