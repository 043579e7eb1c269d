import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HttpError, UpdateUserProfile, UserProfile } from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { defaultProfile, isTimeZone, toProfile } from '../domain/comments.ts';
import { errorResponses } from './schemas.ts';

/** The caller's profile and preferences: one row per user, created on the first change. */
export const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;
  const tags = ['profile'];

  app.get(
    '/profile',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: "The caller's profile and preferences (defaults until changed)", response: { 200: UserProfile, ...errorResponses } },
    },
    async (req) => {
      const { userId } = req.identity;
      const row = await asUser(prisma, userId, (tx) => tx.userProfile.findUnique({ where: { ownerId: userId } }));
      return row ? toProfile(row) : defaultProfile(userId);
    },
  );

  app.patch(
    '/profile',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Change profile fields and preferences', body: UpdateUserProfile, response: { 200: UserProfile, ...errorResponses } },
    },
    async (req) => {
      const { userId } = req.identity;
      const changes = req.body;
      if (changes.timezone !== undefined && !isTimeZone(changes.timezone)) {
        throw new HttpError('validation_failed', `body.timezone "${changes.timezone}" is not an IANA time zone`);
      }
      const row = await asUser(prisma, userId, async (tx) => {
        if (changes.defaultProjectId) {
          const project = await tx.project.findUnique({ where: { id: changes.defaultProjectId }, select: { id: true } });
          if (!project) throw new HttpError('not_found', 'Referenced project not found');
        }
        return tx.userProfile.upsert({ where: { ownerId: userId }, create: { ...changes, ownerId: userId }, update: changes });
      }).catch((e: unknown) => mapPrismaError(e, 'Profile'));
      return toProfile(row);
    },
  );
};
