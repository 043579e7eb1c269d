import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Compile } from 'typebox/compile';
import { CreateTask, CreateTaskBatch, CreateTaskBatchResult, HttpError, IdParams, notFound, type TriggerOrigin } from '@flowdesk/contracts';
import { toTask } from '../domain/mappers.ts';
import { taskChanges } from '../domain/tasks.ts';
import { errorResponses } from './schemas.ts';

const createTaskCheck = Compile(CreateTask);
type BatchAnswer = CreateTaskBatchResult['results'][number];

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
  const { now, tasks, workflows } = app.ctx;
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
};
