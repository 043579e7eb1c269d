import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  FormTriggerLookup,
  IdParams,
  responseModeOf,
  WebhookTriggerLookup,
  WorkflowDefinition,
  WorkflowDefinitionPage,
  notFound,
  type FormTriggerConfig,
} from '@flowdesk/contracts';
import { asDefinitionReader, asTriggerReader } from '../adapters/db.ts';
import { toDefinition } from '../domain/mappers.ts';

const DEFINITION_COLUMNS = {
  id: true,
  ownerId: true,
  version: true,
  definitionVersion: true,
  triggerType: true,
  active: true,
  executionOrder: true,
  errorWorkflowId: true,
  retentionDays: true,
  retentionRuns: true,
  graph: true,
  triggerConfig: true,
} as const;
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
      const [row, flags] = await asTriggerReader(prisma, (tx) =>
        Promise.all([
          tx.workflow.findUnique({
            where: { id: req.params.id },
            select: {
              id: true,
              ownerId: true,
              triggerType: true,
              active: true,
              requireWebhookSecret: true,
              webhookSecretCipher: true,
              triggerConfig: true,
              executionOrder: true,
            },
          }),
          // Computed by Postgres from the graph, which this role may not read (migration 20270120000000).
          tx.$queryRaw<
            { uses_raw_body: boolean; signature_gated: boolean }[]
          >`SELECT "uses_raw_body", "signature_gated" FROM "workspace"."workflow" WHERE "id" = ${req.params.id}::uuid`,
        ]),
      );
      if (!row || row.triggerType !== 'webhook') throw notFound('Webhook trigger');
      const config = (row.triggerConfig ?? {}) as { signature?: unknown; rateLimitPerSecond?: unknown; responseMode?: unknown };
      const responseMode = responseModeOf(config);
      const rate = config.rateLimitPerSecond;
      return {
        workflowId: row.id,
        ownerId: row.ownerId,
        active: row.active,
        // A graph that starts with Verify signature is authenticated by the provider's signature
        // (docs/webhooks.md, "Provider signatures without x-webhook-secret"): no header beside it.
        requireSecret: row.requireWebhookSecret && !flags[0]?.signature_gated,
        signature: config.signature === 'standard-webhooks' ? ('standard-webhooks' as const) : ('none' as const),
        secret: row.webhookSecretCipher ? secrets.open(row.webhookSecretCipher) : null,
        executionOrder: row.executionOrder === 'ordered' ? ('ordered' as const) : ('parallel' as const),
        ...(typeof rate === 'number' && Number.isFinite(rate) && rate > 0 ? { rateLimitPerSecond: rate } : {}),
        // Only workflows that verify a signature (or ask for it) get the raw body published with their events.
        ...(flags[0]?.uses_raw_body ? { rawBody: true } : {}),
        ...(responseMode !== 'immediately' ? { responseMode } : {}),
      };
    },
  );

  // A hosted form (docs/triggers.md, "Form"): webhook-ingest renders the page from it and checks
  // submissions against it. 404 for a workflow without a form trigger, as for the webhook lookup.
  app.get(
    '/form-triggers/:id',
    {
      preHandler: app.requireService('webhook-ingest'),
      schema: { hide: true, params: IdParams, response: { 200: FormTriggerLookup, ...errorResponses } },
    },
    async (req) => {
      const row = await asTriggerReader(prisma, (tx) =>
        tx.workflow.findUnique({
          where: { id: req.params.id },
          select: { id: true, ownerId: true, triggerType: true, active: true, triggerConfig: true, executionOrder: true },
        }),
      );
      if (!row || row.triggerType !== 'form') throw notFound('Form trigger');
      return {
        workflowId: row.id,
        ownerId: row.ownerId,
        active: row.active,
        executionOrder: row.executionOrder === 'ordered' ? ('ordered' as const) : ('parallel' as const),
        // Checked on save (formConfigProblem); ingest checks it again before rendering.
        form: (row.triggerConfig ?? {}) as FormTriggerConfig,
      };
    },
  );

  // The definition caches' cold start (workflow engine, webhook-ingest): every workflow's current
  // definition, by id, in pages. Afterwards they follow workflow.changed events.
  app.get(
    '/workflow-definitions',
    {
      preHandler: app.requireService('workflow-engine', 'webhook-ingest'),
      schema: {
        hide: true,
        querystring: Type.Object(
          { after: Type.Optional(Type.String({ format: 'uuid' })), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 500 })) },
          { additionalProperties: false },
        ),
        response: { 200: WorkflowDefinitionPage, ...errorResponses },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? 500;
      const rows = await asDefinitionReader(prisma, (tx) =>
        tx.workflow.findMany({
          where: req.query.after ? { id: { gt: req.query.after } } : {},
          orderBy: { id: 'asc' },
          take: limit,
          select: DEFINITION_COLUMNS,
        }),
      );
      return { items: rows.map(toDefinition), next: rows.length === limit ? rows[rows.length - 1]!.id : null };
    },
  );

  // One definition: a cache miss (a workflow created a moment ago, whose event has not arrived yet).
  app.get(
    '/workflow-definitions/:id',
    {
      preHandler: app.requireService('workflow-engine', 'webhook-ingest'),
      schema: { hide: true, params: IdParams, response: { 200: WorkflowDefinition, ...errorResponses } },
    },
    async (req) => {
      const row = await asDefinitionReader(prisma, (tx) => tx.workflow.findUnique({ where: { id: req.params.id }, select: DEFINITION_COLUMNS }));
      if (!row) throw notFound('Workflow');
      return toDefinition(row);
    },
  );
};
