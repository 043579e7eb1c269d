import Type, { type Static } from 'typebox';
import { StringEnum } from './common.ts';
import { ExecutionOrder, WorkflowGraph } from './entities/workflows.ts';
import { TriggerType } from './trigger-types.ts';
import { TriggerOrigin } from './triggers.ts';
import { ReplyTo } from './webhook-reply.ts';

/** Kafka topic (and embedded bus channel) of workflow trigger events, keyed by workflow id. */
export const TRIGGER_TOPIC = 'workflow.trigger.v1';
export const TRIGGER_DLQ_TOPIC = 'workflow.trigger.v1.dlq';
/** The longest raw body a trigger event carries, base64: ingest's 1 MiB body limit, encoded. */
export const RAW_BODY_MAX_BASE64 = Math.ceil((1024 * 1024) / 3) * 4;

export const TriggerEvent = Type.Object(
  {
    /** Unique per delivery attempt group: the sender's idempotency key when given, else generated. */
    eventId: Type.String({ minLength: 1, maxLength: 200 }),
    workflowId: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    /** What started it: a webhook delivery, a person (run now, run again), a schedule's tick, a note or an entity change. */
    source: TriggerType,
    /** The user who started a manual run. */
    startedBy: Type.Optional(Type.String({ format: 'uuid' })),
    /** Set when a workflow's own change caused this event (the loop guard, triggers.ts). */
    origin: Type.Optional(TriggerOrigin),
    receivedAt: Type.String({ format: 'date-time' }),
    /** The request body: any JSON object, available to nodes as {{trigger.<path>}}. */
    payload: Type.Record(Type.String(), Type.Unknown()),
    /** Request headers, lower-cased, secrets removed; {{trigger.headers.<name>}}. */
    headers: Type.Record(Type.String(), Type.String()),
    /**
     * The request body as received, base64: only for workflows that need the exact bytes (a Verify
     * signature node, or `triggerConfig.rawBody: true`; docs/webhooks.md, "Raw body"). Absent otherwise.
     */
    rawBody: Type.Optional(Type.String({ maxLength: RAW_BODY_MAX_BASE64 })),
    /**
     * Set on the event that wakes a parked run (the engine's wait timers, docs/workflow-engine.md
     * "Parking"): the run is claimed again and resumes from its checkpoints; the parked step runs
     * again with how it was woken.
     */
    resume: Type.Optional(
      Type.Object({
        nodeId: Type.String(),
        resumedBy: StringEnum(['timer', 'resume', 'approve', 'reject', 'timeout']),
        at: Type.String({ format: 'date-time' }),
        body: Type.Optional(Type.Unknown()),
      }),
    ),
    /**
     * Set on a run started by a Run workflow node that waits for its result: the parked step its
     * outcome resumes (docs/workflow-engine.md, "Run workflow"). Same owner as this event.
     */
    parent: Type.Optional(Type.Object({ workflowId: Type.String({ format: 'uuid' }), eventId: Type.String({ maxLength: 200 }), nodeId: Type.String() })),
    /** Set when the webhook's caller waits for the answer (responseMode not `immediately`): where the engine sends it. */
    replyTo: Type.Optional(ReplyTo),
  },
  { $id: 'TriggerEvent' },
);
export type TriggerEvent = Static<typeof TriggerEvent>;

/**
 * Topic of workflow definition changes, published by workspace-api through its outbox (the event exists
 * iff the change committed), keyed by workflow id. webhook-ingest and the workflow engine keep a cache of
 * definitions fed by it (docs/event-bus.md). Delivery is at-least-once and may repeat an older event:
 * `version` grows with every change of a workflow, and a cache never replaces a newer version by an
 * older one.
 */
export const WORKFLOW_CHANGED_TOPIC = 'workflow.changed.v1';

/** What the engine needs to run a workflow (never its webhook secret: secrets do not travel on the bus). */
export const WorkflowDefinition = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    version: Type.Integer({ minimum: 1 }),
    /**
     * The number of the workflow's newest saved version (docs/workflow-versions.md), which the engine
     * records with every run it starts (`WorkflowRun.workflowVersion`). Not `version`, which counts
     * every change (activation, a new webhook secret). Absent in events older than the field; null: none.
     */
    definitionVersion: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    triggerType: TriggerType,
    active: Type.Boolean(),
    executionOrder: ExecutionOrder,
    /** The workflow the engine starts when a run of this one fails (absent in events older than the field). */
    errorWorkflowId: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
    /** The workflow's own run history retention (absent in older events, null: the engine's global setting). */
    retention: Type.Optional(
      Type.Union([Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1 })), runs: Type.Optional(Type.Integer({ minimum: 1 })) }), Type.Null()]),
    ),
    graph: WorkflowGraph,
    triggerConfig: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'WorkflowDefinition' },
);
export type WorkflowDefinition = Static<typeof WorkflowDefinition>;

export const WorkflowChange = StringEnum(['created', 'updated', 'activated', 'deactivated', 'deleted', 'secret_regenerated']);
export type WorkflowChange = Static<typeof WorkflowChange>;

export const WorkflowChanged = Type.Object(
  {
    eventId: Type.String({ format: 'uuid' }),
    workflowId: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    version: Type.Integer({ minimum: 1 }),
    change: WorkflowChange,
    changedAt: Type.String({ format: 'date-time' }),
    /** The definition after the change; null when the workflow was deleted. */
    definition: Type.Union([WorkflowDefinition, Type.Null()]),
  },
  { $id: 'WorkflowChanged' },
);
export type WorkflowChanged = Static<typeof WorkflowChanged>;

/** A page of current definitions (workspace-api's internal API, the caches' cold start). */
export const WorkflowDefinitionPage = Type.Object({
  items: Type.Array(WorkflowDefinition),
  /** Pass as `after` for the next page; null at the end. */
  next: Type.Union([Type.String(), Type.Null()]),
});
export type WorkflowDefinitionPage = Static<typeof WorkflowDefinitionPage>;

/**
 * Topic of credential revocations, published by auth after a revocation has committed and consumed by
 * every mcp-gateway replica (each its own consumer group), which drops its cached introspection
 * results and internal tokens for the credential at once instead of waiting out the cache TTL.
 * Keyed by user id. See docs/auth.md ("Revocation events").
 */
export const CREDENTIAL_REVOKED_TOPIC = 'auth.credential.revoked.v1';

/** SHA-256 of a bearer token, base64url: what the gateway keys its caches by. Never the token itself. */
export const TokenSha256 = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });

export const CredentialRevoked = Type.Object(
  {
    eventId: Type.String({ format: 'uuid' }),
    /** The credential's owner (introspection's `sub`). */
    userId: Type.String({ format: 'uuid' }),
    /**
     * api_key: one API key; oauth_grant: a whole grant (Disconnect, refresh-token replay) — every token
     * of this user for this OAuth client; oauth_tokens: only the tokens listed in `tokenSha256`
     * (RFC 7009 revocation, reused authorization code); console_session: web console sessions — the
     * ones listed in `tokenSha256`, or every session of userId when it is absent (sign out everywhere,
     * user disabled).
     */
    kind: StringEnum(['api_key', 'oauth_grant', 'oauth_tokens', 'console_session']),
    /** What introspection reports as `client_id` for the credential: the key id, or the OAuth client id. */
    clientId: Type.String({ minLength: 1, maxLength: 200 }),
    /**
     * oauth_tokens: the access tokens that died; console_session: the session tokens that died.
     * Absent: every credential of userId × clientId (console_session: every session of userId).
     */
    tokenSha256: Type.Optional(Type.Array(TokenSha256, { maxItems: 10_000 })),
    revokedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'CredentialRevoked' },
);
export type CredentialRevoked = Static<typeof CredentialRevoked>;

/**
 * The publishing half of @flowdesk/bus's EventBus (which satisfies it structurally), so a service that
 * only publishes needs no dependency on the bus implementation.
 */
export interface EventPublisher {
  publish(topic: string, messages: { key: string; value: object; headers?: Record<string, string>; ordered?: boolean }[]): Promise<void>;
}
