import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams, WebhookTriggerLookup, notFound } from '@flowdesk/contracts';
import { asTriggerReader } from '../adapters/db.ts';
import { errorResponses } from './schemas.ts';

/**
 * Routes for services acting as themselves (`svc:<id>` internal tokens), under /internal/v1. Never
 * routed by the public ingress; absent from the public OpenAPI document.
 */
export const internalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, secrets } = app.ctx;

  app.get(
    '/webhook-triggers/:id',
    {
      preHandler: app.requireService('webhook-ingest'),
      schema: { hide: true, params: IdParams, response: { 200: WebhookTriggerLookup, ...errorResponses } },
    },
    async (req) => {
      const row = await asTriggerReader(prisma, (tx) =>
        tx.workflow.findUnique({
          where: { id: req.params.id },
          select: { id: true, ownerId: true, triggerType: true, active: true, requireWebhookSecret: true, webhookSecretCipher: true, triggerConfig: true },
        }),
      );
      if (!row || row.triggerType !== 'webhook') throw notFound('Webhook trigger');
      const config = (row.triggerConfig ?? {}) as { signature?: unknown };
      return {
        workflowId: row.id,
        ownerId: row.ownerId,
        active: row.active,
        requireSecret: row.requireWebhookSecret,
        signature: config.signature === 'standard-webhooks' ? ('standard-webhooks' as const) : ('none' as const),
        secret: row.webhookSecretCipher ? secrets.open(row.webhookSecretCipher) : null,
      };
    },
  );
};
