import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { EventBus } from '@flowdesk/bus';
import {
  ErrorBody,
  HttpError,
  IdParams,
  ListRunsQuery,
  Page,
  RunStreamQuery,
  RunsHealth,
  RunsHealthQuery,
  RunsSummary,
  RunsSummaryQuery,
  TRIGGER_TOPIC,
  StartRun,
  ResumeRun,
  WorkflowRun,
  notFound,
  type RunStreamEvent,
  type TriggerEvent,
  type WorkflowDefinition,
} from '@flowdesk/contracts';
import type { RunStore } from '../adapters/run-store.ts';
import type { RunWrite } from '../domain/ports.ts';
import { isUnstorablePayload } from '../domain/run-recording.ts';
import type { DefinitionCache } from '../domain/definitions.ts';
import type { RunCancellations } from '../domain/run-control.ts';
import type { ResumeAnswer, WaitStore } from '../adapters/wait-store.ts';
import { resumeSecretHash } from '../domain/process-trigger.ts';

/** The largest body a resume URL or Approve / Reject takes (it becomes the Wait node's output). */
export const RESUME_BODY_LIMIT = 256 * 1024;

/** A refused resume as an HTTP error (docs/workflow-engine.md, "Wait"). */
function resumeRefused(answer: Exclude<ResumeAnswer, { ok: true }>): HttpError {
  switch (answer.why) {
    case 'wrong_secret':
      return new HttpError('unauthorized', 'The resume link is not valid');
    case 'already_resumed':
      return new HttpError('conflict', 'This wait was already resumed');
    case 'not_resumable':
      return new HttpError('conflict', 'This run waits for a timer; only a wait for a resume can be approved or rejected');
    case 'not_waiting':
      return new HttpError('conflict', 'This run is not waiting for a resume');
    default:
      return notFound('Wait');
  }
}

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

/** The consumer group whose unprocessed trigger events are the backlog (app.ts ENGINE_GROUP). */
const TRIGGER_GROUP = 'workflow-engine';
/** Each workflow's waiting events are counted up to this (the bus counts per key with a LIMIT). */
const BACKLOG_COUNT_LIMIT = 1000;

export interface RunRoutesOptions {
  /**
   * Where a rerun's trigger event is published (the engine's own trigger topic); the health reads its
   * backlog when the bus can count it (the embedded bus; not Kafka).
   */
  bus: Pick<EventBus, 'publish' | 'backlog' | 'oldestUnprocessed'>;
  clock: () => Date;
  /** A comment line on every open stream this often, so proxies keep it open (default 15 s). */
  heartbeatMs?: number;
  /** A run cancelled here that executes on this replica stops at its next step at once. */
  cancellations?: Pick<RunCancellations, 'markCancelled'>;
  /** Parked runs' waits: the resume URL and Approve / Reject. */
  waits?: WaitStore;
}

/**
 * The runs API, served by the owner of the data (the paths and answers workspace-api served before
 * the runs moved, libs/contracts entities/workflow-runs.ts), plus the runs stream, the summary and
 * rerun (docs/workflow-engine.md). Internal JWTs with audience workflow-engine; row-level security
 * scopes every query to the token's user.
 */
export function runRoutes(store: RunStore, definitions: DefinitionCache, options: RunRoutesOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['workflow runs'];
    const heartbeatMs = options.heartbeatMs ?? 15_000;
    /** Open streams, ended when the engine closes (a hijacked response would hold the server open). */
    const streams = new Set<() => void>();
    app.addHook('preClose', async () => {
      for (const end of [...streams]) end();
    });

    /** The user's workflow, or 404 (one this user does not own is indistinguishable from none). */
    const ownedWorkflow = async (userId: string, workflowId: string) => {
      const wf = await definitions.get(workflowId);
      if (!wf || wf.ownerId !== userId) throw notFound('Workflow');
      return wf;
    };

    app.get(
      '/workflows/:id/runs',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: "List a workflow's runs, newest first",
          params: IdParams,
          querystring: ListRunsQuery,
          response: { 200: Page(WorkflowRun), ...errorResponses },
        },
      },
      async (req) => {
        const { limit, cursor, status } = req.query;
        // The definitions come from workflow.changed events (domain/definitions.ts).
        await ownedWorkflow(req.identity.userId, req.params.id);
        return store.list(req.identity.userId, { workflowId: req.params.id, status, cursor, limit });
      },
    );
    // The poll link of a webhook answered before its run did (docs/webhooks.md, "Answering the
    // caller"): the run of one delivery, by the event id the webhook answered with.
    app.get(
      '/workflows/:id/runs/by-event/:eventId',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: "Get the run of one webhook delivery by its event id (the webhook's poll link); 404 until the engine has taken the event",
          params: Type.Object({ id: Type.String({ format: 'uuid' }), eventId: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: { 200: WorkflowRun, ...errorResponses },
        },
      },
      async (req) => {
        await ownedWorkflow(req.identity.userId, req.params.id);
        const run = await store.getByEvent(req.identity.userId, req.params.id, req.params.eventId);
        if (!run) throw notFound('Workflow run');
        return run;
      },
    );
    app.get(
      '/workflow-runs',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: 'List runs of all workflows, newest first',
          querystring: ListRunsQuery,
          response: { 200: Page(WorkflowRun), ...errorResponses },
        },
      },
      async (req) => {
        const { limit, cursor, status } = req.query;
        return store.list(req.identity.userId, { status, cursor, limit });
      },
    );
    app.get(
      '/workflow-runs/summary',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: 'Runs and failures in the last hours (default 24), per workflow and in total, with each workflow’s last run',
          querystring: RunsSummaryQuery,
          response: { 200: RunsSummary, ...errorResponses },
        },
      },
      async (req) => {
        const hours = req.query.hours ?? 24;
        return store.summary(req.identity.userId, new Date(options.clock().getTime() - hours * 3_600_000));
      },
    );
    app.get(
      '/workflow-runs/health',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary:
            'The run pipeline’s health for your workflows: runs in the last hours (default 1) by status, the workflows that failed, the backlog (trigger events not yet processed, unfinished runs) and dead-lettered events',
          description:
            'waitingEvents counts trigger events accepted for your workflows that the engine has not processed yet (null on Kafka, which cannot count per workflow: see the consumer lag in Grafana). Dead-lettered events are the ones the engine gave up on after its retries; each is recorded as a failed run with the reason.',
          querystring: RunsHealthQuery,
          response: { 200: RunsHealth, ...errorResponses },
        },
      },
      async (req): Promise<RunsHealth> => {
        const userId = req.identity.userId;
        const now = options.clock();
        const since = new Date(now.getTime() - (req.query.hours ?? 1) * 3_600_000);
        // The backlog is on the bus, keyed by workflow: the caller's workflows from the definitions
        // this engine follows (never another user's keys).
        const keys: string[] = [];
        for (const def of definitions.all()) if (def.ownerId === userId) keys.push(def.id);
        const bus = options.bus;
        const [stored, counts, oldest] = await Promise.all([
          store.health(userId, since),
          bus.backlog ? bus.backlog(TRIGGER_TOPIC, TRIGGER_GROUP, keys, BACKLOG_COUNT_LIMIT) : null,
          bus.oldestUnprocessed ? bus.oldestUnprocessed(TRIGGER_TOPIC, TRIGGER_GROUP, keys) : null,
        ]);
        let waiting: number | null = null;
        if (counts) {
          waiting = 0;
          for (const n of counts.values()) waiting += n;
        }
        return {
          checkedAt: now.toISOString(),
          since: since.toISOString(),
          byStatus: stored.byStatus,
          failingWorkflows: stored.failingWorkflows,
          backlog: { waitingEvents: waiting, oldestWaitingAt: oldest ? oldest.toISOString() : null, ...stored.backlog },
          deadLettered: stored.deadLettered,
        };
      },
    );
    app.get(
      '/workflow-runs/stream',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: 'Server-Sent Events: a `run` event each time one of your runs is queued, starts or finishes (optionally of one workflow)',
          querystring: RunStreamQuery,
          // Hijacked (written raw): the schema documents the answer, it does not serialize it.
          produces: ['text/event-stream'],
          response: {
            200: Type.String({ description: 'An event stream; each `run` event’s data is {workflowId, eventId, status, startedAt, finishedAt}' }),
          },
        },
      },
      async (req, reply) => {
        const userId = req.identity.userId;
        const workflowId = req.query.workflowId;
        if (workflowId) await ownedWorkflow(userId, workflowId);
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // nginx and the like: do not buffer this response.
          'x-accel-buffering': 'no',
          connection: 'keep-alive',
        });
        // The first bytes go at once: headers reach the client (and every proxy) now, not with the first run.
        res.write('retry: 3000\n: connected\n\n');
        const send = (w: RunWrite) => {
          // Only the caller's runs: the feed carries every owner's writes of this replica.
          if (w.ownerId !== userId || (workflowId && w.workflowId !== workflowId)) return;
          const data: RunStreamEvent = {
            workflowId: w.workflowId,
            eventId: w.eventId,
            status: w.status,
            startedAt: w.startedAt ?? null,
            finishedAt: w.finishedAt ?? null,
          };
          res.write(`event: run\ndata: ${JSON.stringify(data)}\n\n`);
        };
        const off = store.onRecorded(send);
        const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
        const end = () => {
          if (!streams.delete(end)) return;
          off();
          clearInterval(heartbeat);
          res.end();
        };
        streams.add(end);
        res.on('close', end);
      },
    );
    app.get(
      '/workflow-runs/:id',
      {
        preHandler: app.requireAccess('read'),
        schema: { tags, summary: 'Get one run with its per-node steps', params: IdParams, response: { 200: WorkflowRun, ...errorResponses } },
      },
      async (req) => {
        const run = await store.get(req.identity.userId, req.params.id);
        if (!run) throw notFound('Workflow run');
        return run;
      },
    );
    app.post(
      '/workflow-runs/:id/cancel',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags,
          summary:
            'Cancel a queued, running or waiting run: it is recorded as cancelled at once and a running run stops before its next step (the step in flight finishes); 409 when the run already finished',
          params: IdParams,
          response: { 200: WorkflowRun, ...errorResponses, 409: ErrorBody },
        },
      },
      async (req) => {
        const result = await store.cancel(req.identity.userId, req.params.id, options.clock());
        if (!result) throw notFound('Workflow run');
        if (!result.cancelled)
          throw new HttpError('conflict', `This run already finished (${result.finished?.status}); only a queued, running or waiting run can be cancelled`);
        options.cancellations?.markCancelled(result.cancelled);
        return result.cancelled;
      },
    );
    app.post(
      '/workflow-runs/:id/resume',
      {
        preHandler: app.requireAccess('write'),
        bodyLimit: RESUME_BODY_LIMIT,
        schema: {
          tags,
          summary:
            'Approve or Reject a run waiting for a resume (a Wait node in mode resume): the run continues on the Wait node’s resumed or rejected branch, with `body` as its output’s body; 409 when it is not waiting for a resume or was resumed already',
          params: IdParams,
          body: ResumeRun,
          response: { 202: Type.Object({ runId: Type.String(), resumedBy: Type.String() }), ...errorResponses, 409: ErrorBody },
        },
      },
      async (req, reply) => {
        if (!options.waits) throw new HttpError('conflict', 'This run is not waiting for a resume');
        const answer = await options.waits.resumeByOwner(req.identity.userId, req.params.id, req.body.action, req.body.body, options.clock());
        if (!answer.ok) {
          if (answer.why === 'not_waiting' && !(await store.get(req.identity.userId, req.params.id))) throw notFound('Workflow run');
          throw resumeRefused(answer);
        }
        return reply.code(202).send({ runId: answer.runId, resumedBy: req.body.action });
      },
    );
    app.post(
      '/workflow-runs/:id/resume-now',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags,
          summary:
            'Resume now: a run waiting for a timer (a Wait node’s duration or date-time, or a retry’s delay) goes on at once, as if its timer had fired (the Wait’s `resumedBy` is `timer`); once — a second call answers 409. 409 when the run is not waiting, waits for a resume (use Approve / Reject) or for another workflow’s run',
          params: IdParams,
          response: { 202: Type.Object({ runId: Type.String(), resumedBy: Type.String() }), ...errorResponses, 409: ErrorBody },
        },
      },
      async (req, reply) => {
        const userId = req.identity.userId;
        const answer = options.waits ? await options.waits.resumeNow(userId, req.params.id, options.clock()) : ({ ok: false, why: 'not_waiting' } as const);
        if (answer.ok) return reply.code(202).send({ runId: answer.runId, resumedBy: 'timer' });
        switch (answer.why) {
          case 'already_resumed':
            throw new HttpError('conflict', 'This run was already resumed: it goes on now');
          case 'waits_for_resume':
            throw new HttpError('conflict', 'This run waits for a resume: Approve or Reject it, or POST to its resume link');
          case 'no_timer':
            throw new HttpError('conflict', 'This run waits for another workflow’s run; only that run’s end (or a cancel) resumes it');
          default: {
            const run = answer.why === 'not_found' ? null : await store.get(userId, req.params.id);
            if (!run) throw notFound('Workflow run');
            throw new HttpError('conflict', `This run is not waiting (${run.status}); only a waiting run can be resumed`);
          }
        }
      },
    );
    app.post(
      '/resume/:waitId',
      {
        // Public: the secret in the link is the credential (a capability URL, as n8n's resume URL).
        bodyLimit: RESUME_BODY_LIMIT,
        schema: {
          tags,
          summary:
            'Resume a run waiting for a resume (a Wait node in mode resume) by its resume link: the JSON body (optional) becomes the Wait node’s `body`; 401 for a wrong secret, 404 for an unknown link, 409 when it was resumed already',
          // No credential: the secret in the link is one.
          security: [],
          params: Type.Object({ waitId: Type.String({ maxLength: 100 }) }),
          querystring: Type.Object({ secret: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: { 202: Type.Object({ runId: Type.String(), resumedBy: Type.String() }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req, reply) => {
        if (!options.waits) throw notFound('Wait');
        const answer = await options.waits.resumeBySecret(req.params.waitId, resumeSecretHash(req.query.secret), req.body ?? undefined, options.clock());
        if (!answer.ok) throw resumeRefused(answer);
        return reply.code(202).send({ runId: answer.runId, resumedBy: 'resume' });
      },
    );
    app.post(
      '/workflow-runs/:id/rerun',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags,
          summary:
            'Run the workflow again with this run’s trigger payload (a new run, queued; recorded with who started it; runs whether the workflow is active or not)',
          params: IdParams,
          response: { 202: WorkflowRun, ...errorResponses, 409: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const userId = req.identity.userId;
        const source = await store.get(userId, req.params.id);
        if (!source) throw notFound('Workflow run');
        const wf = await ownedWorkflow(userId, source.workflowId);
        if (isUnstorablePayload(source.triggerPayload)) throw new HttpError('conflict', 'This run’s payload could not be stored, so it cannot be run again');
        reply.code(202);
        return startManualRun(req.log, userId, wf, source.triggerPayload, source.id, `rerun_${randomUUID()}`);
      },
    );
    app.post(
      '/workflows/:id/runs',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags,
          summary:
            'Run now: start a run of the workflow by hand, with an optional JSON payload as its trigger data (queued; runs whether the workflow is active or not)',
          params: IdParams,
          // Documents the header; a value outside 1–100 visible ASCII characters is ignored (a new run), not refused.
          headers: Type.Object({
            'idempotency-key': Type.Optional(Type.String({ description: 'The same key (1–100 visible ASCII characters) starts one run, not two.' })),
          }),
          body: StartRun,
          response: { 202: WorkflowRun, ...errorResponses, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const userId = req.identity.userId;
        const wf = await ownedWorkflow(userId, req.params.id);
        // An idempotency key makes a retried request start one run, not two (the run's event id).
        const key = req.headers['idempotency-key'];
        const eventId = typeof key === 'string' && /^[\x21-\x7e]{1,100}$/.test(key) ? `manual_${userId}_${key}` : `manual_${randomUUID()}`;
        const existing = typeof key === 'string' ? await store.getByEvent(userId, wf.id, eventId) : null;
        reply.code(202);
        if (existing) return existing;
        return startManualRun(req.log, userId, wf, req.body?.payload ?? {}, null, eventId);
      },
    );

    /**
     * A run started by a person (Run now, run again): the row exists, queued, with who started it,
     * before its trigger event is published; a manual run runs whether the workflow is active or not
     * (as a test run in n8n). If the bus refuses the event the run is recorded failed and the caller
     * gets 503.
     */
    async function startManualRun(
      log: { warn(obj: object, msg: string): void },
      userId: string,
      wf: WorkflowDefinition,
      payload: Record<string, unknown>,
      rerunOf: string | null,
      eventId: string,
    ): Promise<WorkflowRun> {
      const run = await store.queueManual(userId, { workflowId: wf.id, eventId, payload, rerunOf });
      if (!run) {
        // Another request with the same Idempotency-Key queued this run a moment ago: answer with it
        // and publish nothing (its event is that request's to publish).
        const existing = await store.getByEvent(userId, wf.id, eventId);
        if (existing) return existing;
        throw new HttpError('conflict', 'A run with this Idempotency-Key was started and removed at the same time; try again');
      }
      const event: TriggerEvent = {
        eventId,
        workflowId: wf.id,
        ownerId: userId,
        source: 'manual',
        startedBy: userId,
        receivedAt: options.clock().toISOString(),
        payload,
        // A rerun: the original request headers are not kept with a run (only its payload is).
        headers: {},
      };
      try {
        await options.bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: event, ...(wf.executionOrder === 'ordered' ? { ordered: true } : {}) }]);
      } catch (err) {
        log.warn({ err, runId: run.id }, 'manual run not published');
        const at = options.clock().toISOString();
        await store.record({
          ownerId: userId,
          workflowId: wf.id,
          eventId,
          status: 'failed',
          error: 'The run could not be queued: the event bus is unavailable',
          startedAt: at,
          finishedAt: at,
        });
        throw new HttpError('unavailable', 'The run could not be queued; try again');
      }
      return run;
    }
  };
}
