import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Compile } from 'typebox/compile';
import {
  CreateCalendarEntry,
  CreateComment,
  CreateNote,
  CreateTask,
  CreateTaskBatch,
  CreateTaskBatchResult,
  EngineCreateBatch,
  EngineCreateBatchResult,
  HttpError,
  IdParams,
  notFound,
  type EngineCreateKind,
  type TriggerOrigin,
} from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { createOnce } from '../domain/engine-creates.ts';
import { toTask } from '../domain/mappers.ts';
import { taskChanges } from '../domain/tasks.ts';
import { errorResponses } from './schemas.ts';

const createTaskCheck = Compile(CreateTask);
type BatchAnswer = CreateTaskBatchResult['results'][number];
const createChecks = { note: Compile(CreateNote), calendar_entry: Compile(CreateCalendarEntry), comment: Compile(CreateComment) };
const kindName: Record<EngineCreateKind, string> = { note: 'Note', calendar_entry: 'Calendar entry', comment: 'Comment' };
/** Postgres' unique violation (a concurrent twin with the same idempotency key), through Prisma or raw. */
const isUniqueViolation = (e: unknown) => {
  const err = e as { code?: string; meta?: { code?: string }; cause?: { code?: string } };
  return (
    err.code === 'P2002' || err.code === '23505' || err.meta?.code === '23505' || err.cause?.code === '23505' || /23505|unique constraint/i.test(String(e))
  );
};

/**
 * What the workflow engine writes here as the workflow's owner (a user token it obtained by user id,
 * `azp` workflow-engine), under /internal/v1: the sample payload the editor's variable picker shows
 * (PUT /workflows/:id/sample-payload) and the Create Task nodes of many runs of one owner in one call
 * (POST /tasks/batch). No runs: they are the engine's own data, in its `engine` schema. Row-level
 * security applies as for any user request; the azp check keeps users — and an assistant with a
 * user's token — from writing sample payloads or batches. (internal.ts holds the routes where a
 * service acts as itself.)
 */
export const engineAsOwnerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { now, tasks, workflows, prisma } = app.ctx;
  const writeAccess = app.requireAccess('write');
  const engineOnly = async (req: FastifyRequest, reply: Parameters<typeof writeAccess>[1]) => {
    await writeAccess(req, reply);
    if (req.identity.azp !== 'workflow-engine') throw new HttpError('forbidden', 'Only the workflow engine keeps sample payloads');
  };

  app.put(
    '/workflows/:id/sample-payload',
    {
      preHandler: engineOnly,
      schema: { hide: true, params: IdParams, body: Type.Record(Type.String(), Type.Unknown()), response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      // One statement through the executor: the engine writes it up to once a second per workflow.
      if (!(await workflows.setSamplePayload(req.identity.userId, req.params.id, req.body, now()))) throw notFound('Workflow');
      return reply.code(204).send(null);
    },
  );

  // Many runs' Create Task for one owner: one multi-row INSERT under the owner's row-level security
  // (one statement, one round trip, one commit) instead of a request each. Items are validated one by
  // one like POST /api/v1/tasks, so a bad item fails only its run; a project the owner cannot see fails
  // the INSERT as a whole, and the valid items are then inserted one by one so only that one is 404.
  app.post(
    '/tasks/batch',
    {
      preHandler: engineOnly,
      schema: { hide: true, body: CreateTaskBatch, response: { 200: CreateTaskBatchResult, ...errorResponses } },
    },
    async (req) => {
      const userId = req.identity.userId;
      const at = new Date();
      const results = new Array<BatchAnswer>(req.body.tasks.length);
      const valid: {
        index: number;
        data: ReturnType<typeof taskChanges> & { title: string; origin: TriggerOrigin | null; idempotencyKey: string | null };
      }[] = [];
      req.body.tasks.forEach((item, index) => {
        if (!createTaskCheck.Check(item)) {
          const first = createTaskCheck.Errors(item)[0];
          results[index] = {
            status: 400,
            error: 'validation_failed',
            message: `body${first?.instancePath.replaceAll('/', '.') ?? ''} ${first?.message ?? 'is invalid'}`,
          };
          return;
        }
        valid.push({
          index,
          data: {
            ...taskChanges(item, undefined, now()),
            title: item.title,
            origin: req.body.origins?.[index] ?? null,
            idempotencyKey: req.body.idempotencyKeys?.[index] ?? null,
          },
        });
      });
      const answer = (e: unknown): BatchAnswer => {
        if (e instanceof HttpError) return { status: e.statusCode, error: e.code, message: e.message };
        throw e;
      };
      if (valid.length > 0) {
        try {
          const rows = await tasks.createMany(
            userId,
            valid.map((v) => v.data),
            at,
          );
          rows.forEach((row, i) => (results[valid[i]!.index] = { status: 201, task: toTask(row) }));
        } catch (err) {
          answer(err); // anything but "not yours" is the server's problem
          for (const v of valid) {
            // createMany of one, not create: it honours the item's idempotency key.
            results[v.index] = await tasks.createMany(userId, [v.data], at).then(([row]) => ({ status: 201 as const, task: toTask(row!) }), answer);
          }
        }
      }
      return { results };
    },
  );

  // Many runs' Create Note / Create Calendar Entry / Add Comment for one owner in one call. Each item
  // is validated like its public create route and runs in its own transaction under the owner's
  // row-level security (a target or project the owner cannot see is that item's 404); an item with an
  // idempotency key the owner already used for its kind answers the row created with it.
  app.post(
    '/creates/batch',
    {
      preHandler: engineOnly,
      schema: { hide: true, body: EngineCreateBatch, response: { 200: EngineCreateBatchResult, ...errorResponses } },
    },
    async (req) => {
      const userId = req.identity.userId;
      const results: EngineCreateBatchResult['results'] = [];
      for (const { kind, body, idempotencyKey, origin } of req.body.items) {
        const check = createChecks[kind];
        if (!check.Check(body)) {
          const first = check.Errors(body)[0];
          const where = first?.instancePath.replaceAll('/', '.') ?? '';
          results.push({ status: 400, error: 'validation_failed', message: `body${where} ${first?.message ?? 'is invalid'}` });
          continue;
        }
        const attempt = () =>
          asUser(prisma, userId, (tx) => createOnce(tx, userId, kind, body, idempotencyKey ?? null, origin)).catch((e: unknown) =>
            isUniqueViolation(e) ? Promise.reject(e) : mapPrismaError(e, kindName[kind]),
          );
        try {
          // A twin with the same key committed first: the second attempt finds its row.
          const item = await attempt().catch((e: unknown) => (idempotencyKey && isUniqueViolation(e) ? attempt() : Promise.reject(e)));
          results.push({ status: 201, item });
        } catch (e) {
          if (!(e instanceof HttpError)) throw e;
          results.push({ status: e.statusCode, error: e.code, message: e.message });
        }
      }
      return { results };
    },
  );
};
