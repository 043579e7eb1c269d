import type { EventBus, Subscription } from '@flowdesk/bus';
import { DLQ_HEADERS, instanceGroupId } from '@flowdesk/bus';
import {
  Audience,
  ErrorBody,
  STEP_TEST_RETENTION_DAYS,
  OWNER_THROTTLE_TOPIC,
  TRIGGER_DLQ_TOPIC,
  TRIGGER_TOPIC,
  WEBHOOK_REPLY_TOPIC,
  WORKFLOW_CHANGED_TOPIC,
  type TriggerEvent,
  type WebhookReply,
  type WorkflowChanged,
} from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import { createService, internalAuth, PUBLIC_SECURITY, PUBLIC_SECURITY_SCHEMES, SecretBox, serveOpenApi, type Service } from '@flowdesk/service-kit';
import { CredentialStore } from './adapters/credential-store.ts';
import { OAuth2Client } from './adapters/oauth2-client.ts';
import { credentialRoutes } from './routes/credentials.ts';
import { DEAD_LETTER_ERROR_PREFIX, RunStore } from './adapters/run-store.ts';
import { countStartRefused, countThrottled, runMetrics, sandboxMetrics, setOwnerMetricsSource } from './adapters/telemetry.ts';
import { SandboxPool, type SandboxPoolOptions } from './adapters/sandbox-pool.ts';
import { OwnerFairness, type FairnessLimits } from './domain/fairness.ts';
import { RUN_QUEUE_CHANNEL, RunQueueStore } from './adapters/run-queue.ts';
import { usageRoutes } from './routes/usage.ts';
import { START_QUOTA_SETTINGS, StartQuotas, type StartQuotaLimits } from './domain/quotas.ts';
import { recordRun, unstorablePayload } from './domain/run-recording.ts';
import type { WorkspaceClient } from './adapters/workspace-client.ts';
import { DefinitionCache, type DefinitionSource } from './domain/definitions.ts';
import type { HttpClient, MailSender } from './domain/ports.ts';
import { createSmtpMailer } from './adapters/smtp-mailer.ts';
import type { RunLimits } from './domain/executor.ts';
import { SampleKeeper, fallbackAnswer, processTriggerEvent, type ProcessDeps } from './domain/process-trigger.ts';
import { runRoutes } from './routes/runs.ts';
import { stepTestRoutes } from './routes/step-tests.ts';
import { dryRunRoutes } from './routes/dry-runs.ts';
import { DeliveryStore } from './adapters/delivery-store.ts';
import { StepTestStore } from './adapters/step-test-store.ts';
import { Sweeper } from './domain/sweeper.ts';
import { DEFAULT_RETENTION, RunCancellations, RunRetention, type RetentionPolicy } from './domain/run-control.ts';
import { SCHEDULE_CHANNEL, ScheduleStore } from './adapters/schedule-store.ts';
import { Scheduler } from './domain/scheduler.ts';
import { WaitStore } from './adapters/wait-store.ts';
import { WaitTimers } from './domain/wait-timers.ts';
import { WAIT_CHANNEL } from './adapters/wait-store.ts';
import { resumeLinkKey } from './domain/resume-links.ts';
import { ChangeTriggers } from './domain/change-triggers.ts';
import type { TriggerSource } from './domain/trigger-source.ts';

export const ENGINE_GROUP = 'workflow-engine';
export const API_PREFIX = '/api/v1';
/** Attempts of the dead-letter subscriber to record a failed run (about ten minutes of backoff). */
const DEAD_LETTER_ATTEMPTS = 25;

export interface WorkflowEngineDeps {
  bus: EventBus;
  /** The engine's database (migrated with migrateEngine): runs and their steps. */
  db: Database;
  /** PEM public key(s) of auth's internal-token signing key: the runs API takes audience workflow-engine. */
  jwtPublicKeyPem: string;
  workspace: WorkspaceClient;
  /** The definitions' cold start and misses; default workspace.definitions. */
  definitions?: DefinitionSource;
  /** The SSRF-guarded client of the HTTP Request node (@flowdesk/service-kit, outbound/guarded-http.ts). */
  http: HttpClient;
  /**
   * The Send Email node's SMTP client (adapters/smtp-mailer.ts), built with the same SSRF policy as `http`.
   * Default: one with the default policy (private and loopback servers refused).
   */
  mail?: MailSender;
  /** Runs handled at once by this replica, all workflows together (ENGINE_CONCURRENCY, default 256: most of a run's time is waiting). */
  concurrency?: number;
  /**
   * Runs of one workflow handled at once by this replica (ENGINE_WORKFLOW_CONCURRENCY, default 128).
   * Workflows set to `ordered` run one at a time whatever this is (their events carry `ordered`).
   */
  workflowConcurrency?: number;
  /**
   * Consumer group of this replica's workflow.changed subscription: every replica needs every change,
   * so each process has its own, deleted when it closes (ephemeral). Default: a new
   * `workflow-engine.definitions.<host>.<uuid>` (instanceGroupId).
   */
  definitionsGroup?: string;
  limits?: Partial<RunLimits>;
  /**
   * Runs that start runs (Run workflow, error workflows; docs/workflow-engine.md, "Limits"): depth,
   * child runs per run, starts per owner per minute (this replica's bucket). Default DEFAULT_START_QUOTAS.
   */
  quotas?: Partial<StartQuotaLimits>;
  /**
   * Fairness across owners (docs/workflow-engine.md): runs of one owner in flight on this replica
   * (ENGINE_OWNER_CONCURRENCY, default half of `concurrency`); past it an owner's trigger events wait
   * in engine.run_queue and start round-robin across owners; an owner with `maxBacklog` queued runs
   * (ENGINE_OWNER_MAX_BACKLOG, default 1,000; 0: never) is refused at intake (429).
   */
  fairness?: Partial<FairnessLimits>;
  /** Owners with an owner_id label on /metrics (ENGINE_METRICS_TOP_OWNERS, opt-in: default 0, none; at most 100). docs/observability.md. */
  metricsTopOwners?: number;
  /**
   * The credentials store's key (CREDENTIALS_KEY, 32 bytes) and its id (CREDENTIALS_KEY_ID, default
   * k1), with older keys by id during a rotation (docs/credentials.md). Without it the credentials API
   * answers 503 and a run that refers to a credential fails with the reason.
   */
  credentialsKey?: { key: Buffer; keyId?: string; previous?: Record<string, Buffer> };
  /** At most one sample payload write per workflow in this interval (default 1000 ms). */
  samplePayloadIntervalMs?: number;
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  logStream?: { write(line: string): void };
  clock?: () => Date;
  /** Heartbeat of the runs stream (default 15 s): a comment line that keeps idle proxies from closing it. */
  streamHeartbeatMs?: number;
  /**
   * Schedule triggers (docs/triggers.md): the longest this replica sleeps between looks for due ticks
   * (SCHEDULER_POLL_MS, default 10 s, a safety poll: it sleeps until the next due tick, and a notified
   * earlier one wakes it; 0: never, this replica fires no schedules) and when a late tick counts as missed.
   * Ticks are read from `clock`, so a test moves time by moving the clock.
   */
  scheduler?: { pollMs?: number; lateAfterMs?: number; leaseMs?: number };
  /** Run history retention (docs/operations.md): default 30 days, no per-workflow count, pruned every 5 minutes. */
  retention?: Partial<RetentionPolicy>;
  /** How often this replica asks whether a run it executes was cancelled through another replica (default 1000 ms). */
  cancelPollMs?: number;
  /**
   * Parked runs (docs/workflow-engine.md, "Parking"): how often this replica looks for due wakes
   * (WAIT_POLL_MS, default 10 s: the longest sleep between rounds, a safety poll, as a notified
   * earlier fire_at wakes it; 0: never), the claim's lease and
   * the claim's batch. Woken runs: at most `concurrency` / `workflowConcurrency` at once, a pool of their own.
   */
  waits?: { pollMs?: number; leaseMs?: number; batch?: number };
  /** The public base URL of resume links (PUBLIC_BASE_URL), e.g. https://flowdesk.example.com. */
  publicBaseUrl?: string;
  /** A retry delay of at least this many ms parks the run instead of sleeping (RETRY_PARK_MS, default 5000). */
  retryParkMs?: number;
  /** The sandbox's worker pool (ENGINE_SANDBOX_*: docs/workflow-engine.md, "Isolation"); defaults for the rest. */
  sandbox?: Partial<SandboxPoolOptions>;
  /** Run this step, per owner (default STEP_TEST_RATE_LIMIT per STEP_TEST_RATE_WINDOW_MS, libs/contracts). */
  stepTestRateLimit?: { max: number; windowMs: number };
  /** Dry runs per owner (tests; default DRY_RUN_RATE_LIMIT per DRY_RUN_RATE_WINDOW_MS). */
  dryRunRateLimit?: { max: number; windowMs: number };
}

/**
 * The engine: the runs API (its own data) over HTTP, and a consumer of trigger events in the
 * `workflow-engine` group (more replicas share the work). Before consuming it follows workflow.changed
 * events and reads every definition once; it stops, letting in-flight runs finish, on close.
 */
export async function buildApp(deps: WorkflowEngineDeps): Promise<Service> {
  const subscriptions: Subscription[] = [];
  let consuming = false;
  // Resume links known before the Wait ({{wait.<id>.resumeUrl}}) are keyed by a sub-key of the credentials key.
  const linkKey = deps.credentialsKey ? resumeLinkKey(deps.credentialsKey.key) : undefined;
  const app = createService({
    name: 'workflow-engine',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    readiness: async () => {
      if (!consuming) throw new Error('not consuming');
    },
  });
  const clock = deps.clock ?? (() => new Date());
  const mail = deps.mail ?? createSmtpMailer();
  const source = deps.definitions ?? deps.workspace.definitions;
  if (!source) throw new Error('workflow-engine: a definition source is needed (workspaceClient with serviceToken)');
  const definitions = new DefinitionCache(source);
  const runs = new RunStore(deps.db);
  const credentials = new CredentialStore(
    deps.db,
    deps.credentialsKey
      ? new SecretBox(deps.credentialsKey.key, { keyId: deps.credentialsKey.keyId ?? 'k1', previous: deps.credentialsKey.previous })
      : undefined,
    // OAuth2 credentials' token requests go through the same SSRF guard as every outbound request.
    {
      client: new OAuth2Client(deps.http, clock),
      clock,
      ...(deps.publicBaseUrl ? { callbackUrl: `${deps.publicBaseUrl.replace(/\/+$/, '')}${API_PREFIX}/credentials/oauth2/callback` } : {}),
    },
  );
  const cancellations = new RunCancellations(runs, app.log, deps.cancelPollMs);
  // A workflow's own retention travels with its definition (workflow.changed events): read at each round.
  const retention = new RunRetention(runs, { ...DEFAULT_RETENTION, ...deps.retention }, clock, app.log, function* () {
    for (const d of definitions.all()) if (d.retention) yield { ownerId: d.ownerId, workflowId: d.id, ...d.retention };
  });
  // Delivery ids past their window (Verify signature's refuseReplays) and step tests past their
  // retention, every minute.
  const sweeper = new Sweeper(60_000, app.log, async () => {
    await deliveries.sweep(clock());
    await stepTests.sweep(new Date(clock().getTime() - STEP_TEST_RETENTION_DAYS * 86_400_000));
  });
  const samples = new SampleKeeper(deps.workspace, app.log, deps.samplePayloadIntervalMs);
  const waits = new WaitStore(deps.db);
  // Code steps and expressions that are not inline run here: worker threads with deadlines enforced from this thread.
  const sandbox = new SandboxPool({ ...deps.sandbox, log: app.log, metrics: sandboxMetrics });
  const deliveries = new DeliveryStore(deps.db);
  const stepTests = new StepTestStore(deps.db);
  // The answer to a waiting webhook caller, keyed by the ingest replica that holds the request, on
  // the reply topic's partition that replica reads (docs/event-bus.md, "Reply topic").
  const sendReply = (reply: WebhookReply, partition: number | undefined): Promise<void> =>
    deps.bus.publish(WEBHOOK_REPLY_TOPIC, [{ key: reply.replica, value: reply, ...(partition === undefined ? {} : { partition }) }]);
  const processDeps: ProcessDeps = {
    runs,
    credentials: credentials.configured ? credentials : undefined,
    definitions,
    workspace: deps.workspace,
    samples,
    http: deps.http,
    mail,
    clock,
    log: app.log,
    metrics: runMetrics,
    sandbox,
    limits: deps.limits,
    deliveries,
    quotas: new StartQuotas(
      deps.quotas,
      () => clock().getTime(),
      (ownerId, quota, message) => {
        countStartRefused(quota);
        fairness.refused(ownerId, quota, START_QUOTA_SETTINGS[quota], message);
      },
    ),
    cancellations,
    resumeBaseUrl: deps.publicBaseUrl,
    ...(deps.retryParkMs !== undefined ? { retryParkMs: deps.retryParkMs } : {}),
    ...(linkKey ? { resumeLinkKey: linkKey } : {}),
    startErrorWorkflow: (event, ordered) => deps.bus.publish(TRIGGER_TOPIC, [{ key: event.workflowId, value: event, ...(ordered ? { ordered: true } : {}) }]),
    startSubWorkflow: (event, ordered) => deps.bus.publish(TRIGGER_TOPIC, [{ key: event.workflowId, value: event, ...(ordered ? { ordered: true } : {}) }]),
    resumeParent: (parent, body) => waits.resumeByParent(parent, body, clock()),
    reply: sendReply,
  };
  // Each owner's share of this replica: past its cap its events wait in the run queue (fairness.ts).
  const fairness: OwnerFairness = new OwnerFairness({
    store: new RunQueueStore(deps.db),
    concurrency: deps.concurrency,
    wakeUps: (fn) => deps.db.listen(RUN_QUEUE_CHANNEL, fn),
    ...deps.fairness,
    run: async (event) => {
      await processTriggerEvent(event, processDeps);
    },
    isOrdered: async (event) => (await definitions.get(event.workflowId))?.executionOrder === 'ordered',
    giveUp: (event, attempts, err) =>
      recordDeadLetter(event, { [DLQ_HEADERS.attempts]: String(attempts), [DLQ_HEADERS.error]: err instanceof Error ? err.message : String(err) }),
    onThrottle: (state) => deps.bus.publish(OWNER_THROTTLE_TOPIC, [{ key: state.ownerId, value: state }]),
    countThrottled,
    sandboxUsage: (ownerId) => sandbox.ownerBudget(ownerId),
    clock,
    log: app.log,
  });
  // A woken run runs here, on the replica that claimed its wake (docs/workflow-engine.md, "Parking").
  const waitTimers = new WaitTimers({
    store: waits,
    wake: (w) => processTriggerEvent({ ...w.event, resume: w.resume }, processDeps),
    wakeUps: (fn) => deps.db.listen(WAIT_CHANNEL, fn),
    clock,
    log: app.log,
    concurrency: deps.concurrency,
    workflowConcurrency: deps.workflowConcurrency,
    ...deps.waits,
  });
  // What starts runs inside the engine (webhook and manual runs are published by ingest and the runs API).
  const triggerSources: TriggerSource[] = [
    new Scheduler({
      store: new ScheduleStore(deps.db),
      bus: deps.bus,
      clock,
      log: app.log,
      wakeUps: (fn) => deps.db.listen(SCHEDULE_CHANNEL, fn),
      ...deps.scheduler,
    }),
    new ChangeTriggers({ bus: deps.bus, groupId: `${ENGINE_GROUP}.change-triggers`, definitions, clock, log: app.log }),
  ];

  app.addSchema(ErrorBody);
  // Its public routes' document (the console merges it into /api/v1/openapi.json), as the edge presents them.
  await serveOpenApi(app, {
    title: 'Flowdesk workflow engine',
    description: 'The runs API, workflow credentials and Run this step, reached through the console edge (docs/console.md).',
    securitySchemes: PUBLIC_SECURITY_SCHEMES,
    security: PUBLIC_SECURITY,
  });
  await app.register(internalAuth, { publicKeyPem: deps.jwtPublicKeyPem, audience: Audience.workflowEngine });
  await app.register(runRoutes(runs, definitions, { bus: deps.bus, clock, heartbeatMs: deps.streamHeartbeatMs, cancellations, waits }), { prefix: API_PREFIX });
  await app.register(credentialRoutes(credentials), { prefix: API_PREFIX });
  await app.register(usageRoutes(fairness), { prefix: API_PREFIX });
  setOwnerMetricsSource(
    { owners: () => fairness.ownerCounters(), intakeThrottled: (id) => fairness.intakeThrottled(id), sandbox: () => sandbox.allOwnerStats() },
    deps.metricsTopOwners,
  );
  await app.register(
    stepTestRoutes(definitions, {
      credentials: credentials.configured ? credentials : undefined,
      workspace: deps.workspace,
      http: deps.http,
      mail,
      clock,
      log: app.log,
      sandbox,
      limits: deps.limits,
      store: stepTests,
      ...(deps.stepTestRateLimit ? { rateLimit: deps.stepTestRateLimit } : {}),
    }),
    { prefix: API_PREFIX },
  );
  await app.register(
    dryRunRoutes(definitions, {
      credentials: credentials.configured ? credentials : undefined,
      workspace: deps.workspace,
      clock,
      log: app.log,
      sandbox,
      limits: deps.limits,
      ...(deps.dryRunRateLimit ? { rateLimit: deps.dryRunRateLimit } : {}),
    }),
    { prefix: API_PREFIX },
  );

  /** A failed run for a trigger event the bus gave up on, with the reason (its payload, or a placeholder). */
  const recordDeadLetter = async (e: TriggerEvent, headers: Record<string, string>): Promise<void> => {
    // A failed read (workspace-api restarting) throws, so the bus delivers this again: swallowing it
    // dropped the run silently. Only a workflow that is really gone (deleted) is skipped.
    const workflow = await definitions.get(e.workflowId);
    if (!workflow || workflow.ownerId !== e.ownerId) {
      app.log.info({ workflowId: e.workflowId, eventId: e.eventId }, 'dead-lettered event of a workflow that no longer exists; dropped');
      return;
    }
    const at = clock().toISOString();
    const reason = headers[DLQ_HEADERS.error] ?? 'unknown error';
    const error = `${DEAD_LETTER_ERROR_PREFIX}${headers[DLQ_HEADERS.attempts] ?? 'several'} attempts: ${reason}`;
    const base = {
      ownerId: e.ownerId,
      workflowId: e.workflowId,
      eventId: e.eventId,
      status: 'failed' as const,
      startedAt: at,
      finishedAt: at,
      triggerType: e.source,
    };
    app.log.warn({ workflowId: e.workflowId, eventId: e.eventId, reason }, 'trigger event dead-lettered; recorded as a failed run');
    // The payload may be what could not be stored all along (a write that can never succeed):
    // the run keeps a placeholder and its error says so. Anything else throws (retried).
    await recordRun(runs, { ...base, payload: e.payload, error }, (writeError, err) => ({
      ...base,
      payload: unstorablePayload(err),
      error: `${error}; the trigger payload could not be stored (${writeError}) and was replaced by a placeholder`,
    }));
    // A caller still waiting (its ingest replica holds the request until RESPOND_TIMEOUT_MS) learns
    // the run failed, as for any failed run (docs/webhooks.md, "Answering the caller").
    if (e.replyTo) {
      const run = await runs.getByEvent(e.ownerId, e.workflowId, e.eventId).catch(() => null);
      const answer = fallbackAnswer(e.eventId, run?.id ?? null, 'ran', {
        status: 'failed',
        steps: [],
        error: 'the run could not be processed and was given up',
      });
      await sendReply({ eventId: e.eventId, replica: e.replyTo.replica, ...answer }, e.replyTo.partition).catch((err: unknown) =>
        app.log.warn({ err, workflowId: e.workflowId, eventId: e.eventId }, 'answer to the webhook caller not sent'),
      );
    }
  };

  let closing = false;
  let starting: Promise<void> | undefined;
  const startConsuming = async (): Promise<void> => {
    // Changes first, then the snapshot: a change committed while the snapshot is read arrives as an
    // event, and versions decide which of the two is newer.
    subscriptions.push(
      await deps.bus.subscribe<WorkflowChanged>({
        topic: WORKFLOW_CHANGED_TOPIC,
        groupId: deps.definitionsGroup ?? instanceGroupId(`${ENGINE_GROUP}.definitions`),
        // A fresh group starts at the oldest stored change, so nothing committed between this
        // subscription and the cold read below is missed; replays are harmless (versions decide).
        ephemeral: true,
        concurrency: 1,
        handler: async (message) => {
          definitions.apply(message.value);
          for (const s of triggerSources) await s.apply?.(message.value);
          if (message.value.change === 'deleted') await runs.deleteWorkflowRuns(message.value.ownerId, message.value.workflowId);
        },
      }),
    );
    // workspace-api and auth may still be starting (containers start in any order): retry the cold
    // read with backoff rather than exit; the engine is not ready (not consuming) until it succeeded.
    let loaded: number;
    for (let attempt = 1; ; attempt++) {
      try {
        loaded = await definitions.load();
        break;
      } catch (err) {
        if (closing) return;
        app.log.warn({ err, attempt }, 'workflow definitions not readable yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * attempt, 2_000)));
      }
    }
    if (closing) return;
    app.log.info({ definitions: loaded }, 'workflow definitions loaded');
    // Trigger sources (schedules) in step with the definitions as loaded (events received meanwhile
    // were applied too; the store keeps the newest version).
    for (const def of [...definitions.all()]) for (const s of triggerSources) if (s.types.includes(def.triggerType)) await s.sync?.(def);
    subscriptions.push(
      await deps.bus.subscribe<TriggerEvent>({
        topic: TRIGGER_TOPIC,
        groupId: ENGINE_GROUP,
        concurrency: deps.concurrency ?? 256,
        keyConcurrency: deps.workflowConcurrency ?? 128,
        // Under its owner's cap the event runs here as before; past it, it is queued and acknowledged.
        handler: (message) => fairness.admit(message.value),
      }),
    );
    // Never lose a run silently: an event the engine gave up on (dead-lettered after its retries)
    // becomes a failed run with the reason, visible in the runs panel, not only a row in the DLQ.
    subscriptions.push(
      await deps.bus.subscribe<TriggerEvent>({
        topic: TRIGGER_DLQ_TOPIC,
        groupId: `${ENGINE_GROUP}.dead-letters`,
        concurrency: 8,
        // Failing here (workspace-api or the database unreachable for a while) would dead-letter the
        // dead letter, and nothing reads that: keep trying for about ten minutes.
        retry: { maxAttempts: DEAD_LETTER_ATTEMPTS, initialBackoffMs: 250, maxBackoffMs: 30_000 },
        handler: async (message) => {
          if ((message.headers[DLQ_HEADERS.groupId] ?? ENGINE_GROUP) !== ENGINE_GROUP) return;
          const e = message.value;
          try {
            await recordDeadLetter(e, message.headers);
          } catch (err) {
            if (message.attempt >= DEAD_LETTER_ATTEMPTS)
              app.log.error({ err, workflowId: e.workflowId, eventId: e.eventId }, 'a dead-lettered trigger event could not be recorded as a failed run');
            throw err;
          }
        },
      }),
    );
    // The trigger sources: the change triggers' subscription and the scheduler's timer.
    if (closing) return;
    for (const s of triggerSources) await s.start();
    cancellations.start();
    retention.start();
    sweeper.start();
    waitTimers.start();
    fairness.start();
    consuming = true;
  };
  app.addHook('onReady', async () => {
    // The hook waits a few seconds (a normal start, and the tests: consuming once ready() resolved),
    // then start-up goes on in the background, not ready (/readyz 503) until it is done: fastify
    // fails an onReady hook after its plugin timeout (10 s), and a loaded machine took longer than
    // that to start auth and workspace-api, so the engine exited instead of retrying.
    starting = startConsuming().catch((err: unknown) => {
      app.log.error({ err }, 'workflow-engine could not start consuming');
    });
    await Promise.race([starting, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  });
  app.addHook('onClose', async () => {
    closing = true;
    await starting;
    // The sources first (no new trigger events), then the consumers, in reverse.
    for (const s of triggerSources) await s.stop();
    await waitTimers.stop();
    await fairness.stop();
    await retention.stop();
    await sweeper.stop();
    consuming = false;
    // In reverse: stop taking trigger events (in-flight runs finish and are recorded), then the rest.
    for (const s of subscriptions.splice(0).reverse()) await s.close();
    await runs.drain();
    cancellations.stop();
    await sandbox.close();
  });
  return app;
}
