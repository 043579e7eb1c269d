import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { HttpError, IdParams, RecordRun, RecordedRun, RunEventParams, notFound } from '@flowdesk/contracts';
import type { Prisma } from '../generated/prisma/client.ts';
import { asUser } from '../adapters/db.ts';
import { toRun } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

const FINISHED = new Set(['succeeded', 'failed', 'skipped']);
const json = (v: unknown) => v as Prisma.InputJsonValue;

/**
 * What the workflow engine writes, as the workflow's owner (a user token it obtained by user id,
 * `azp` workflow-engine): runs and the sample payload. Row-level security applies as for any user
 * request; the azp check keeps users — and an assistant with a user's token — from forging runs.
 */
export const internalRunRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, now } = app.ctx;
  const writeAccess = app.requireAccess('write');
  const engineOnly = async (req: FastifyRequest, reply: Parameters<typeof writeAccess>[1]) => {
    await writeAccess(req, reply);
    if (req.identity.azp !== 'workflow-engine') throw new HttpError('forbidden', 'Only the workflow engine records runs');
  };

  app.put(
    '/workflows/:id/runs/:eventId',
    { preHandler: engineOnly, schema: { hide: true, params: RunEventParams, body: RecordRun, response: { 200: RecordedRun, ...errorResponses } } },
    async (req) => {
      const { id, eventId } = req.params;
      const { userId } = req.identity;
      const b = req.body;
      const data = {
        status: b.status,
        ...(b.triggerPayload !== undefined ? { triggerPayload: json(b.triggerPayload) } : {}),
        ...(b.steps !== undefined ? { steps: json(b.steps) } : {}),
        ...(b.warnings !== undefined ? { warnings: json(b.warnings) } : {}),
        ...(b.error !== undefined ? { error: b.error } : {}),
        ...(b.startedAt !== undefined ? { startedAt: b.startedAt ? new Date(b.startedAt) : null } : {}),
        ...(b.finishedAt !== undefined ? { finishedAt: b.finishedAt ? new Date(b.finishedAt) : null } : {}),
      };
      return asUser(prisma, userId, async (tx) => {
        const wf = await tx.workflow.findUnique({ where: { id }, select: { id: true } });
        if (!wf) throw notFound('Workflow');
        const key = { ownerId_workflowId_eventId: { ownerId: userId, workflowId: id, eventId } };
        const existing = await tx.workflowRun.findUnique({ where: key });
        if (existing && FINISHED.has(existing.status)) return { run: toRun(existing), changed: false };
        const run = existing
          ? await tx.workflowRun.update({ where: key, data })
          : await tx.workflowRun.create({ data: { ...data, ownerId: userId, workflowId: id, eventId } });
        return { run: toRun(run), changed: true };
      });
    },
  );

  app.put(
    '/workflows/:id/sample-payload',
    {
      preHandler: engineOnly,
      schema: { hide: true, params: IdParams, body: Type.Record(Type.String(), Type.Unknown()), response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      const { count } = await asUser(prisma, req.identity.userId, (tx) =>
        tx.workflow.updateMany({ where: { id: req.params.id }, data: { samplePayload: json(req.body), samplePayloadAt: now() } }),
      );
      if (count === 0) throw notFound('Workflow');
      return reply.code(204).send(null);
    },
  );
};
