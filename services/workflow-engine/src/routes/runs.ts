import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { EventBus } from '@flowdesk/bus';
import {
  ErrorBody,
  HttpError,
  IdParams,
  ListRunsQuery,
  Page,
  RunStreamQuery,
  RunsSummary,
  RunsSummaryQuery,
  TRIGGER_TOPIC,
  WorkflowRun,
  notFound,
  type RunStreamEvent,
  type TriggerEvent,
} from '@flowdesk/contracts';
import type { RunStore, RunWrite } from '../adapters/run-store.ts';
import type { DefinitionCache } from '../domain/definitions.ts';

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

export interface RunRoutesOptions {
  /** Where a rerun's trigger event is published (the engine's own trigger topic). */
  bus: Pick<EventBus, 'publish'>;
  clock: () => Date;
  /** A comment line on every open stream this often, so proxies keep it open (default 15 s). */
  heartbeatMs?: number;
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
        schema: { tags, summary: "List a workflow's runs, newest first", params: IdParams, querystring: ListRunsQuery, response: { 200: Page(WorkflowRun), ...errorResponses } },
      },
      async (req) => {
        const { limit, cursor, status } = req.query;
        // The definitions come from workflow.changed events (domain/definitions.ts).
        await ownedWorkflow(req.identity.userId, req.params.id);
        return store.list(req.identity.userId, { workflowId: req.params.id, status, cursor, limit });
      },
    );
    app.get(
      '/workflow-runs',
      {
        preHandler: app.requireAccess('read'),
        schema: { tags, summary: 'List runs of all workflows, newest first', querystring: ListRunsQuery, response: { 200: Page(WorkflowRun), ...errorResponses } },
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
      '/workflow-runs/stream',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags,
          summary: 'Server-Sent Events: a `run` event each time one of your runs is queued, starts or finishes (optionally of one workflow)',
          querystring: RunStreamQuery,
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
          const data: RunStreamEvent = { workflowId: w.workflowId, eventId: w.eventId, status: w.status, startedAt: w.startedAt ?? null, finishedAt: w.finishedAt ?? null };
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
      '/workflow-runs/:id/rerun',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags,
          summary: 'Run the workflow again with this run’s trigger payload (a new run, queued; recorded with who started it)',
          params: IdParams,
          response: { 202: WorkflowRun, ...errorResponses, 409: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const userId = req.identity.userId;
        const source = await store.get(userId, req.params.id);
        if (!source) throw notFound('Workflow run');
        const wf = await ownedWorkflow(userId, source.workflowId);
        if (!wf.active) throw new HttpError('conflict', 'The workflow is inactive: activate it to run it again');
        if (source.triggerPayload.unstorablePayload === true) throw new HttpError('conflict', 'This run’s payload could not be stored, so it cannot be run again');
        const eventId = `rerun_${randomUUID()}`;
        const run = await store.queueManual(userId, { workflowId: wf.id, eventId, payload: source.triggerPayload, rerunOf: source.id });
        const event: TriggerEvent = {
          eventId,
          workflowId: wf.id,
          ownerId: userId,
          source: 'manual',
          receivedAt: options.clock().toISOString(),
          payload: source.triggerPayload,
          // The original request headers are not kept with a run (only its payload is).
          headers: {},
        };
        try {
          await options.bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: event, ...(wf.executionOrder === 'ordered' ? { ordered: true } : {}) }]);
        } catch (err) {
          req.log.warn({ err, runId: run.id }, 'rerun not published');
          const at = options.clock().toISOString();
          await store.record({ ownerId: userId, workflowId: wf.id, eventId, status: 'failed', error: 'The run could not be queued: the event bus is unavailable', startedAt: at, finishedAt: at });
          throw new HttpError('unavailable', 'The run could not be queued; try again');
        }
        reply.code(202);
        return run;
      },
    );
  };
}
