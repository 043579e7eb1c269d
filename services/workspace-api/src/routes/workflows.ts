import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateWorkflow,
  CreatedWorkflow,
  HttpError,
  IdParams,
  ListWorkflowsQuery,
  Page,
  UpdateWorkflow,
  SetWebhookSecret,
  WebhookSecret,
  WebhookSecretSet,
  Workflow,
  signingSecretProblem,
  allows,
  maskGraphSecrets,
  notFound,
} from '@flowdesk/contracts';
import type { Prisma } from '../generated/prisma/client.ts';
import { asUser, type Tx } from '../adapters/db.ts';
import { announceWorkflowChange } from '../adapters/outbox.ts';
import { keysetPage } from '../domain/pagination.ts';
import { containsText } from '../domain/text-search.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { retentionColumns, toWorkflow, webhookUrl } from '../domain/mappers.ts';
import { validateGraph, validateTriggerConfig } from '../domain/graph.ts';
import { SecretBox } from '../domain/secret-box.ts';
import { errorResponses } from './schemas.ts';

export const workflowRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, secrets, publicBaseUrl, now } = app.ctx;
  // After a commit that wrote an outbox row: publish it now rather than at the next poll.
  const published = <T>(value: T): T => {
    app.ctx.outbox?.nudge();
    return value;
  };
  const map = toWorkflow(publicBaseUrl);
  /**
   * What a caller may read of a workflow: with write (who may also reveal the webhook secret) all of
   * it; read-only callers (an mcp:read token, get_workflow) get inline secrets in HTTP Request nodes
   * masked (libs/contracts workflow-secrets.ts, docs/credentials.md). Credential references stay.
   */
  const mapFor = (scope: string) =>
    allows(scope, 'write')
      ? map
      : (row: Parameters<typeof map>[0]) => {
          const wf = map(row);
          return { ...wf, graph: maskGraphSecrets(wf.graph) };
        };
  const tags = ['workflows'];
  const json = (v: unknown) => v as Prisma.InputJsonValue;

  app.get(
    '/workflows',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List workflows', querystring: ListWorkflowsQuery, response: { 200: Page(Workflow), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, active, triggerType, q } = req.query;
      const page = keysetPage('workflows', cursor, limit);
      const and: Prisma.WorkflowWhereInput[] = [page.where];
      if (active !== undefined) and.push({ active });
      if (triggerType) and.push({ triggerType });
      if (q) and.push({ OR: [{ name: containsText(q) }, { description: containsText(q) }] });
      const rows = await asUser(prisma, req.identity.userId, (tx) => tx.workflow.findMany({ where: { AND: and }, orderBy: page.orderBy, take: page.take }));
      return page.toPage(rows, mapFor(req.identity.scope));
    },
  );

  app.post(
    '/workflows',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Create a workflow; a webhook trigger gets its secret, shown in this answer',
        body: CreateWorkflow,
        response: { 201: CreatedWorkflow, ...errorResponses },
      },
    },
    async (req, reply) => {
      const { userId } = req.identity;
      const b = req.body;
      if (b.graph) validateGraph(b.graph);
      validateTriggerConfig(b.triggerType, b.triggerConfig ?? {}, b.active ?? false);
      const secret = b.triggerType === 'webhook' ? SecretBox.generateSecret() : null;
      const row = await asUser(prisma, userId, async (tx) => {
        if (b.errorWorkflowId) await checkErrorWorkflow(tx, b.errorWorkflowId, null);
        const created = await tx.workflow.create({
          data: {
            ownerId: userId,
            name: b.name,
            description: b.description ?? '',
            triggerType: b.triggerType,
            active: b.active ?? false,
            graph: json(b.graph ?? { nodes: [], edges: [] }),
            triggerConfig: json(b.triggerConfig ?? {}),
            requireWebhookSecret: b.requireWebhookSecret ?? true,
            webhookSecretCipher: secret ? secrets.seal(secret) : null,
            executionOrder: b.executionOrder ?? 'parallel',
            errorWorkflowId: b.errorWorkflowId ?? null,
            ...retentionColumns(b.retention),
          },
        });
        await announceWorkflowChange(tx, 'created', created, now());
        return created;
      }).then(published);
      return reply.code(201).send({ ...map(row), webhookSecret: secret });
    },
  );

  app.get(
    '/workflows/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Get a workflow with its node graph', params: IdParams, response: { 200: Workflow, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.workflow.findUnique({ where: { id: req.params.id } }));
      if (!row) throw notFound('Workflow');
      return mapFor(req.identity.scope)(row);
    },
  );

  app.patch(
    '/workflows/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Update a workflow: rename, edit the graph, activate or deactivate, change the trigger',
        params: IdParams,
        body: UpdateWorkflow,
        response: { 200: Workflow, ...errorResponses },
      },
    },
    async (req) => {
      const b = req.body;
      if (b.graph) validateGraph(b.graph);
      const row = await asUser(prisma, req.identity.userId, async (tx) => {
        const current = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { triggerType: true, active: true, triggerConfig: true } });
        if (!current) throw notFound('Workflow');
        if (b.errorWorkflowId) await checkErrorWorkflow(tx, b.errorWorkflowId, req.params.id);
        if (b.triggerType !== undefined || b.triggerConfig !== undefined || b.active) {
          const config =
            b.triggerConfig ?? (b.triggerType === undefined || b.triggerType === current.triggerType ? (current.triggerConfig as Record<string, unknown>) : {});
          validateTriggerConfig(b.triggerType ?? current.triggerType, config, b.active ?? current.active);
        }
        // Switching to a webhook trigger generates a new secret, as creating one does; switching away
        // drops the old one, so coming back never revives a secret that may have leaked meanwhile.
        const secretChange =
          b.triggerType === undefined || (b.triggerType === 'webhook') === (current.triggerType === 'webhook')
            ? {}
            : { webhookSecretCipher: b.triggerType === 'webhook' ? secrets.seal(SecretBox.generateSecret()) : null };
        const updated = await tx.workflow.update({
          where: { id: req.params.id },
          data: {
            name: b.name,
            description: b.description,
            triggerType: b.triggerType,
            active: b.active,
            graph: b.graph === undefined ? undefined : json(b.graph),
            triggerConfig: b.triggerConfig === undefined ? undefined : json(b.triggerConfig),
            requireWebhookSecret: b.requireWebhookSecret,
            executionOrder: b.executionOrder,
            errorWorkflowId: b.errorWorkflowId,
            ...retentionColumns(b.retention),
            version: { increment: 1 },
            ...secretChange,
          },
        });
        const change = updated.active === current.active ? 'updated' : updated.active ? 'activated' : 'deactivated';
        await announceWorkflowChange(tx, change, updated, now());
        return updated;
      })
        .then(published)
        .catch((e: unknown) => mapPrismaError(e, 'Workflow'));
      return map(row);
    },
  );

  app.delete(
    '/workflows/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Delete a workflow and its runs', params: IdParams, response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      const found = await asUser(prisma, req.identity.userId, async (tx) => {
        const gone = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true, ownerId: true, version: true } });
        if (!gone) return false;
        await tx.workflow.deleteMany({ where: { id: gone.id } });
        await announceWorkflowChange(tx, 'deleted', { ...gone, version: gone.version + 1, deleted: true }, now());
        return true;
      }).then(published);
      if (!found) throw notFound('Workflow');
      return reply.code(204).send(null);
    },
  );

  const secretRoute = { tags, params: IdParams, response: { 200: WebhookSecret, ...errorResponses } };

  // Revealing a secret is as sensitive as changing it: both need write access.
  app.get(
    '/workflows/:id/webhook-secret',
    { preHandler: app.requireAccess('write'), schema: { ...secretRoute, summary: 'Show the webhook secret (trigger settings)' } },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) =>
        tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true, triggerType: true, webhookSecretCipher: true } }),
      );
      if (!row) throw notFound('Workflow');
      if (row.triggerType !== 'webhook' || !row.webhookSecretCipher) throw notFound('Webhook trigger');
      return { workflowId: row.id, secret: secrets.open(row.webhookSecretCipher), url: webhookUrl(publicBaseUrl, row.id) };
    },
  );

  /** Seals a webhook trigger's new secret (generated, or the sender's own) and announces it: ingest reads the trigger again. */
  const replaceWebhookSecret = (userId: string, workflowId: string, secret: string) =>
    asUser(prisma, userId, async (tx) => {
      const current = await tx.workflow.findUnique({ where: { id: workflowId }, select: { triggerType: true } });
      if (!current) throw notFound('Workflow');
      if (current.triggerType !== 'webhook') throw notFound('Webhook trigger');
      const updated = await tx.workflow.update({
        where: { id: workflowId },
        data: { webhookSecretCipher: secrets.seal(secret), version: { increment: 1 } },
      });
      await announceWorkflowChange(tx, 'secret_regenerated', updated, now());
      return updated;
    }).then(published);

  app.post(
    '/workflows/:id/webhook-secret/regenerate',
    {
      preHandler: app.requireAccess('write'),
      schema: { ...secretRoute, summary: 'Replace the webhook secret; the old one stops working at once' },
    },
    async (req) => {
      const secret = SecretBox.generateSecret();
      const row = await replaceWebhookSecret(req.identity.userId, req.params.id, secret);
      return { workflowId: row.id, secret, url: webhookUrl(publicBaseUrl, row.id) };
    },
  );

  // A signing secret of the sender's choosing (Svix, Clerk, Resend show theirs): kept sealed like the
  // generated one (HMAC verification needs the secret itself, so it cannot be hashed), and never
  // answered back in full. The change is announced like a regeneration: ingest reads the trigger again.
  app.put(
    '/workflows/:id/webhook-secret',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        params: IdParams,
        body: SetWebhookSecret,
        response: { 200: WebhookSecretSet, ...errorResponses },
        summary: "Use a signing secret of the sender's choosing (whsec_…); the old secret stops working at once",
      },
    },
    async (req) => {
      const secret = req.body.secret.trim();
      const problem = signingSecretProblem(secret);
      if (problem) throw new HttpError('validation_failed', `body.secret: ${problem}`);
      const row = await replaceWebhookSecret(req.identity.userId, req.params.id, secret);
      return { workflowId: row.id, url: webhookUrl(publicBaseUrl, row.id), secretEnding: secret.slice(-4) };
    },
  );
};

/**
 * A workflow's error workflow must be another workflow of the same owner (the query runs as the
 * owner, so another user's workflow is not found): 400 naming the field otherwise.
 */
async function checkErrorWorkflow(tx: Tx, errorWorkflowId: string, self: string | null): Promise<void> {
  if (errorWorkflowId === self) throw new HttpError('validation_failed', 'body.errorWorkflowId must name another workflow, not this one');
  const target = await tx.workflow.findUnique({ where: { id: errorWorkflowId }, select: { id: true } });
  if (!target) throw new HttpError('validation_failed', 'body.errorWorkflowId must name one of your workflows');
}
