import {
  ApiKeyList,
  ChangePassword,
  CreatedInvite,
  CreateInvite,
  Page,
  ResumeRun,
  ConnectedAppList,
  CreateApiKey,
  CreateCredential,
  CreatedApiKey,
  CreateUser,
  Credential,
  CredentialList,
  ErrorBody,
  ListedUser,
  MAX_PAGE_SIZE,
  OwnerUsage,
  RunStatus,
  RunsHealth,
  RunsSummary,
  StartRun,
  StepTestEntry,
  StepTestResult,
  TestStep,
  UpdateCredential,
  UserList,
  WorkflowRun,
} from '@flowdesk/contracts';

type Json = Record<string, unknown>;
/** An OpenAPI document as JSON: only the parts read here are typed. */
interface OpenApiDocument extends Json {
  paths?: Record<string, Json>;
  info?: Json & { version?: string };
  components?: Json & { schemas?: Json };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), json(ref('ErrorBody'), 'Error')]));
const noContent = { description: 'Done' };
const strip = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' ? undefined : v))) as unknown;

const User = {
  type: 'object',
  required: ['id', 'email', 'name', 'role'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['owner', 'member'] },
  },
};
const Session = {
  type: 'object',
  required: ['user', 'csrfToken'],
  properties: {
    user: User,
    session: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        createdAt: { type: 'string', format: 'date-time' },
        expiresAt: { type: 'string', format: 'date-time' },
        idleExpiresAt: { type: 'string', format: 'date-time' },
      },
    },
    csrfToken: { type: 'string', description: 'Send it as X-CSRF-Token with every change made with the session cookie.' },
  },
};
const SessionOpened = {
  type: 'object',
  required: ['user', 'expiresAt', 'csrfToken'],
  properties: { user: User, expiresAt: { type: 'string', format: 'date-time' }, csrfToken: { type: 'string' } },
};
const Credentials = {
  type: 'object',
  required: ['email', 'password'],
  properties: { email: { type: 'string', format: 'email' }, password: { type: 'string' } },
};
const NewAccount = {
  type: 'object',
  required: ['email', 'name', 'password'],
  properties: {
    email: { type: 'string', format: 'email' },
    name: { type: 'string' },
    password: { type: 'string', minLength: 10 },
    inviteToken: { type: 'string' },
  },
};
const body = (schema: unknown) => ({ required: true, content: { 'application/json': { schema } } });
const opens = 'Opens a console session: sets the fd_session cookie (HttpOnly, SameSite=Lax) and answers the CSRF token.';
const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }];
const nameParam = [{ name: 'name', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } }];

/** The account routes the edge answers through auth (docs/console.md). */
const ACCOUNT_PATHS: Json = {
  '/api/v1/setup': {
    get: {
      tags: ['account'],
      summary: 'Whether the owner account still has to be created, and how sign-up works',
      security: [],
      responses: {
        200: json({
          type: 'object',
          properties: {
            needsOwner: { type: 'boolean' },
            signup: { type: 'string', enum: ['open', 'invite', 'off'] },
            demoAccount: {
              type: 'object',
              description: '`npm start` only: the demo account, while it is enabled (its password and API keys are in .flowdesk/dev.json)',
              properties: { email: { type: 'string' } },
            },
          },
        }),
      },
    },
    post: {
      tags: ['account'],
      summary: 'Create the owner account (first run only)',
      description: opens,
      security: [],
      requestBody: body(NewAccount),
      responses: { 201: json(SessionOpened, 'Created'), ...errors(400, 403, 409) },
    },
  },
  '/api/v1/signup': {
    post: {
      tags: ['account'],
      summary: 'Create an account (when sign-up is open, or with an invite)',
      description: opens,
      security: [],
      requestBody: body(NewAccount),
      responses: { 201: json(SessionOpened, 'Created'), ...errors(400, 403, 409) },
    },
  },
  '/api/v1/session': {
    get: {
      tags: ['account'],
      summary: 'The signed-in user, the session and its CSRF token',
      security: [{ session: [] }],
      responses: { 200: json(Session), ...errors(401) },
    },
    post: {
      tags: ['account'],
      summary: 'Sign in',
      description: `${opens} Throttled per account and per client address (429 with Retry-After).`,
      security: [],
      requestBody: body(Credentials),
      responses: { 201: json(SessionOpened, 'Signed in'), ...errors(400, 401, 403, 429) },
    },
    delete: {
      tags: ['account'],
      summary: 'Sign out (this session)',
      security: [{ session: [], csrf: [] }],
      responses: { 204: noContent, ...errors(401, 403) },
    },
  },
  '/api/v1/session/all': {
    delete: {
      tags: ['account'],
      summary: 'Sign out everywhere (every session of the user)',
      security: [{ session: [], csrf: [] }],
      responses: { 204: noContent, ...errors(401, 403) },
    },
  },
  '/api/v1/account/password': {
    post: {
      tags: ['account'],
      summary: 'Change the password',
      requestBody: body(strip(ChangePassword)),
      responses: { 204: noContent, ...errors(400, 401, 403) },
    },
  },
  '/api/v1/api-keys': {
    get: { tags: ['api-keys'], summary: 'List API keys (never their secrets)', responses: { 200: json(ref('ApiKeyList')), ...errors(401) } },
    post: {
      tags: ['api-keys'],
      summary: 'Create an API key: Read (mcp:read) or Read + Write (mcp:write); the secret is in this answer only',
      requestBody: body(ref('CreateApiKey')),
      responses: { 201: json(ref('CreatedApiKey'), 'Created'), ...errors(400, 401, 403) },
    },
  },
  '/api/v1/api-keys/{id}': {
    delete: {
      tags: ['api-keys'],
      summary: 'Revoke an API key (the next request with it gets 401)',
      parameters: idParam,
      responses: { 204: noContent, ...errors(401, 403, 404) },
    },
  },
  '/api/v1/connected-apps': {
    get: {
      tags: ['connected-apps'],
      summary: 'API keys and OAuth clients that can act for you',
      responses: { 200: json(ref('ConnectedAppList')), ...errors(401) },
    },
  },
  '/api/v1/connected-apps/{id}': {
    delete: {
      tags: ['connected-apps'],
      summary: 'Revoke a key or disconnect an OAuth client (every token of its grant)',
      parameters: idParam,
      responses: { 204: noContent, ...errors(401, 403, 404) },
    },
  },
  '/api/v1/invites': {
    post: {
      tags: ['members'],
      summary: 'Invite someone (owner only); the answer carries the invite token',
      requestBody: body(strip(CreateInvite)),
      responses: {
        201: json(strip(CreatedInvite), 'Created'),
        ...errors(400, 401, 403),
      },
    },
  },
  // Served by the workflow engine, which owns the store (docs/credentials.md): no answer carries a value.
  '/api/v1/credentials': {
    get: {
      tags: ['credentials'],
      summary: 'List your workflow credentials: names and dates, never values',
      responses: { 200: json(ref('CredentialList')), ...errors(401) },
    },
    post: {
      tags: ['credentials'],
      summary: 'Create a credential (stored encrypted; nodes refer to it as {{credentials.<name>}})',
      requestBody: body(ref('CreateCredential')),
      responses: { 201: json(ref('Credential'), 'Created'), ...errors(400, 401, 403, 409, 503) },
    },
  },
  '/api/v1/credentials/{name}': {
    put: {
      tags: ['credentials'],
      summary: "Replace a credential's value",
      parameters: nameParam,
      requestBody: body(ref('UpdateCredential')),
      responses: { 200: json(ref('Credential')), ...errors(400, 401, 403, 404, 503) },
    },
    delete: {
      tags: ['credentials'],
      summary: 'Delete a credential (workflows that use it fail until it exists again)',
      parameters: nameParam,
      responses: { 204: noContent, ...errors(401, 403, 404) },
    },
  },
  '/api/v1/users': {
    get: {
      tags: ['members'],
      summary: 'The accounts of this Flowdesk (owner only)',
      responses: { 200: json(ref('UserList')), ...errors(401, 403) },
    },
    post: {
      tags: ['members'],
      summary: 'Add a member with a first password (owner only; the CLI’s `flowdesk users create`)',
      requestBody: body(ref('CreateUser')),
      responses: { 201: json(ref('ListedUser'), 'Created'), ...errors(400, 401, 403, 409) },
    },
  },
  '/api/v1/users/{id}/disable': {
    post: {
      tags: ['members'],
      summary: 'Disable an account (owner only): its sessions end, its API keys and OAuth grants stop working while it is disabled',
      parameters: idParam,
      responses: { 204: noContent, ...errors(401, 403, 404, 409) },
    },
  },
  '/api/v1/users/{id}/enable': {
    post: {
      tags: ['members'],
      summary: 'Enable a disabled account again (owner only)',
      parameters: idParam,
      responses: { 204: noContent, ...errors(401, 403, 404) },
    },
  },
};

const query = (name: string, schema: unknown, description?: string) => ({
  name,
  in: 'query',
  required: false,
  schema: strip(schema),
  ...(description ? { description } : {}),
});
/** A resumed run's answer (the engine's resume routes). */
const Resumed = { type: 'object', required: ['runId', 'resumedBy'], properties: { runId: { type: 'string' }, resumedBy: { type: 'string' } } };
/** The engine's page of runs (Page(WorkflowRun)), its items by reference. */
const runsPage = json({
  ...(strip(Page(WorkflowRun)) as Json),
  properties: { items: { type: 'array', items: ref('WorkflowRun') }, nextCursor: (strip(Page(WorkflowRun)) as { properties: Json }).properties.nextCursor },
});
const listRunsQuery = [
  query('limit', { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 25 }),
  query('cursor', { type: 'string', maxLength: 200 }, 'Opaque; nextCursor of the previous page.'),
  query('status', RunStatus),
];

/**
 * The runs API, answered by the workflow engine (the runs' owner; docs/console.md, "The edge"): not in
 * workspace-api's document, so described here from the same contracts the engine validates with.
 */
const RUN_PATHS: Json = {
  '/api/v1/workflow-runs': {
    get: {
      tags: ['workflow runs'],
      summary: 'List runs of all your workflows, newest first',
      parameters: listRunsQuery,
      responses: { 200: runsPage, ...errors(400, 401) },
    },
  },
  '/api/v1/workflow-runs/summary': {
    get: {
      tags: ['workflow runs'],
      summary: 'Runs and failures in the last hours (default 24), per workflow and in total, with each workflow’s last run',
      parameters: [query('hours', { type: 'integer', minimum: 1, maximum: 720, default: 24 })],
      responses: { 200: json(ref('RunsSummary')), ...errors(400, 401) },
    },
  },
  '/api/v1/workflow-runs/health': {
    get: {
      tags: ['workflow runs'],
      summary:
        'The run pipeline’s health for your workflows: runs by status in the last hours (default 1), failing workflows, the backlog and dead-lettered events',
      description:
        'waitingEvents counts trigger events accepted for your workflows that the engine has not processed yet (null on Kafka, which cannot count per workflow: see the consumer lag in Grafana). Dead-lettered events are the ones the engine gave up on after its retries; each is recorded as a failed run with the reason.',
      parameters: [query('hours', { type: 'integer', minimum: 1, maximum: 24, default: 1 })],
      responses: { 200: json(ref('RunsHealth')), ...errors(400, 401) },
    },
  },
  '/api/v1/workflow-runs/usage': {
    get: {
      tags: ['workflow runs'],
      summary:
        'Your share of the engine: runs, throttled (queued behind your in-flight cap) and refused starts, your queue, and whether webhooks are refused (429)',
      description:
        'Counters are the answering engine replica’s since it started; queued is your whole queue. intakeThrottled: your workflows’ webhooks are answered 429 with Retry-After (docs/workflow-engine.md, "Fairness across owners").',
      responses: { 200: json(ref('OwnerUsage')), ...errors(401) },
    },
  },
  '/api/v1/workflow-runs/stream': {
    get: {
      tags: ['workflow runs'],
      summary: 'Server-Sent Events: a `run` event each time one of your runs is queued, starts or finishes (optionally of one workflow)',
      parameters: [query('workflowId', { type: 'string', format: 'uuid' })],
      responses: {
        200: {
          description: 'An event stream (text/event-stream); each `run` event’s data is {workflowId, eventId, status, startedAt, finishedAt}',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/workflows/{id}/runs/by-event/{eventId}': {
    get: {
      tags: ['workflow runs'],
      summary: "The run of one webhook delivery by its event id (the webhook's poll link, docs/webhooks.md); 404 until the engine has taken the event",
      parameters: [...idParam, { name: 'eventId', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } }],
      responses: { 200: json(ref('WorkflowRun')), ...errors(401, 404) },
    },
  },
  '/api/v1/workflow-runs/{id}': {
    get: {
      tags: ['workflow runs'],
      summary: 'One run with its per-node steps (input, output, error, duration) and its trace id',
      parameters: idParam,
      responses: { 200: json(ref('WorkflowRun')), ...errors(401, 404) },
    },
  },
  '/api/v1/workflow-runs/{id}/cancel': {
    post: {
      tags: ['workflow runs'],
      summary:
        'Cancel a queued, running or waiting run: recorded as cancelled at once; a running run stops before its next step (the step in flight finishes). 409 when it already finished',
      parameters: idParam,
      responses: { 200: json(ref('WorkflowRun'), 'Cancelled'), ...errors(401, 403, 404, 409) },
    },
  },
  '/api/v1/workflow-runs/{id}/resume': {
    post: {
      tags: ['workflow runs'],
      summary:
        'Approve or Reject a run waiting for a resume (a Wait node in mode resume): it continues on the Wait node’s resumed or rejected branch with `body` as the output’s body. 409 when it is not waiting for a resume or was resumed already',
      parameters: idParam,
      requestBody: body(strip(ResumeRun)),
      responses: {
        202: json(Resumed, 'Resumed'),
        ...errors(400, 401, 403, 404, 409),
      },
    },
  },
  '/api/v1/resume/{waitId}': {
    post: {
      tags: ['workflow runs'],
      summary:
        'A waiting run’s resume link (the Wait node; public, served by the workflow engine: the secret in the link is the credential). The JSON body (optional, ≤ 256 KiB) becomes the Wait node’s `body`. 401 for a wrong secret, 404 for an unknown link, 409 when resumed already',
      security: [],
      parameters: [
        { name: 'waitId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        { name: 'secret', in: 'query', required: true, schema: { type: 'string' } },
      ],
      responses: {
        202: json(Resumed, 'Resumed'),
        ...errors(400, 401, 404, 409),
      },
    },
  },
  '/api/v1/workflow-runs/{id}/rerun': {
    post: {
      tags: ['workflow runs'],
      summary: 'Run the workflow again with this run’s trigger payload (a new run, queued)',
      parameters: idParam,
      responses: { 202: json(ref('WorkflowRun'), 'Queued'), ...errors(401, 403, 404, 409, 503) },
    },
  },
  '/api/v1/workflows/{id}/runs': {
    get: {
      tags: ['workflow runs'],
      summary: 'List a workflow’s runs, newest first',
      parameters: [...idParam, ...listRunsQuery],
      responses: { 200: runsPage, ...errors(400, 401, 404) },
    },
    post: {
      tags: ['workflow runs'],
      summary: 'Run now: start a run of the workflow by hand, with an optional JSON payload as its trigger data (queued)',
      parameters: [
        ...idParam,
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          schema: { type: 'string', maxLength: 100 },
          description: 'The same key starts one run, not two.',
        },
      ],
      requestBody: { required: false, content: { 'application/json': { schema: strip(StartRun) } } },
      responses: { 202: json(ref('WorkflowRun'), 'Queued'), ...errors(400, 401, 403, 404, 503) },
    },
  },
  '/api/v1/workflows/{id}/test-step': {
    post: {
      tags: ['workflow runs'],
      summary:
        'Run this step: execute one node (as sent, saved or not) once against a sample payload and earlier nodes’ outputs; records no run (each test is listed under step-tests; limited per owner, 429); HTTP Request and Create Task act for real',
      parameters: idParam,
      requestBody: { required: true, content: { 'application/json': { schema: strip(TestStep) } } },
      responses: { 200: json(strip(StepTestResult), 'The step: input, output or error'), ...errors(400, 401, 403, 404, 429) },
    },
  },
  '/api/v1/workflows/{id}/step-tests': {
    get: {
      tags: ['workflow runs'],
      summary: "The workflow's step tests (Run this step), newest first: node, status, error, the HTTP request sent; kept 30 days",
      parameters: [...idParam, ...listRunsQuery.slice(0, 2)],
      responses: {
        200: json(strip(Page(StepTestEntry)), 'A page of step tests'),
        ...errors(400, 401, 403, 404),
      },
    },
  },
};

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (fdk_…, Settings → API keys) or an OAuth access token. mcp:read may read; writes need mcp:write.',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'fd_session',
    description: 'The console session (set by sign-in). Browsers only; never accepted as a bearer token.',
  },
  csrf: {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description: 'With the session cookie, every change also needs this header: csrfToken from GET /api/v1/session.',
  },
};

/**
 * The public API's document: workspace-api's own (its /api/v1 paths), with the account routes added
 * and the edge's security schemes instead of the internal JWT nobody outside can hold.
 */
export function publicOpenApi(workspace: OpenApiDocument, publicBaseUrl: string): OpenApiDocument {
  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries(workspace.paths ?? {})) {
    if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') continue;
    const ops: Json = {};
    for (const [method, op] of Object.entries(item)) {
      const { security: _internal, ...rest } = op as Json;
      ops[method] = rest;
    }
    paths[path] = ops;
  }
  Object.assign(paths, ACCOUNT_PATHS, RUN_PATHS);
  return {
    ...workspace,
    info: {
      title: 'Flowdesk API',
      version: workspace.info?.version ?? '1.0.0',
      description:
        'The public API of Flowdesk: your workspace (projects, tasks, calendar, notes, workflows, runs, comments, profile) and your account. Authenticate with an API key or OAuth access token as a bearer token, or — in the browser console — with the session cookie plus the X-CSRF-Token header on every change. A read credential (mcp:read) gets 403 on writes.',
    },
    servers: [{ url: publicBaseUrl }],
    paths,
    components: {
      ...(workspace.components ?? {}),
      schemas: {
        ...(workspace.components?.schemas ?? {}),
        ErrorBody: strip(ErrorBody),
        CreateApiKey: strip(CreateApiKey),
        CreatedApiKey: strip(CreatedApiKey),
        ApiKeyList: strip(ApiKeyList),
        ConnectedAppList: strip(ConnectedAppList),
        Credential: strip(Credential),
        CredentialList: strip(CredentialList),
        CreateCredential: strip(CreateCredential),
        UpdateCredential: strip(UpdateCredential),
        WorkflowRun: strip(WorkflowRun),
        RunsSummary: strip(RunsSummary),
        RunsHealth: strip(RunsHealth),
        OwnerUsage: strip(OwnerUsage),
        ListedUser: strip(ListedUser),
        UserList: strip(UserList),
        CreateUser: strip(CreateUser),
      },
      securitySchemes: SECURITY_SCHEMES,
    },
    security: [{ bearer: [] }, { session: [], csrf: [] }],
  };
}
