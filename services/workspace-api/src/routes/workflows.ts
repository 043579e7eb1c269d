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
  ListWorkflowVersionsQuery,
  WorkflowVersion,
  WorkflowVersionParams,
  WorkflowVersionSummary,
  SetWebhookSecret,
  WebhookSecret,
  WebhookSecretSet,
  Workflow,
  WorkflowExport,
  WorkflowImportBody,
  WorkflowImportResult,
  WORKFLOW_IMPORT_MAX_BYTES,
  workflowFileName,
  signingSecretProblem,
  allows,
  maskGraphSecrets,
  notFound,
  PinSample,
  SAMPLE_PAYLOAD_MAX_BYTES,
  type SampleSource,
  type PageOf,
} from '@flowdesk/contracts';
import type { Prisma, Workflow as WorkflowRow } from '../generated/prisma/client.ts';
import { asUser, type Tx } from '../adapters/db.ts';
import { announceWorkflowChange } from '../adapters/outbox.ts';
import { keysetPage, offsetPage, valuePage } from '../domain/pagination.ts';
import { DEFINITION_FIELDS, recordVersion, toVersion, toVersionSummary, type VersionAuthor } from '../domain/versions.ts';
import { containsText } from '../domain/text-search.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { retentionColumns, toWorkflow, webhookUrl } from '../domain/mappers.ts';
import { validateGraph, validateTriggerConfig } from '../domain/graph.ts';
import { readImport, toExport } from '../domain/workflow-export.ts';
import { fromN8n, isN8nFile, type N8nImport } from '../domain/n8n-import.ts';
import { SecretBox } from '../domain/secret-box.ts';
import { errorResponses } from './schemas.ts';

export const workflowRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, secrets, publicBaseUrl, now, versionsKeep } = app.ctx;
  /** Who a save is by: the user, and the client (API key / OAuth client, MCP client, service) it came through. */
  const authorOf = (identity: { userId: string; clientId?: unknown; azp?: unknown }): VersionAuthor => ({
    userId: identity.userId,
    client: typeof identity.clientId === 'string' ? identity.clientId : typeof identity.azp === 'string' ? identity.azp : null,
  });
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

  /**
   * An update of a workflow (PATCH, and a restore of a version): validated, saved, versioned when it
   * touches the definition, and announced, all in the caller's transaction.
   */
  const saveUpdate = async (tx: Tx, id: string, b: UpdateWorkflow, author: VersionAuthor) => {
    if (b.graph) validateGraph(b.graph);
    const current = await tx.workflow.findUnique({ where: { id }, select: { triggerType: true, active: true, triggerConfig: true } });
    if (!current) throw notFound('Workflow');
    if (b.errorWorkflowId) await checkErrorWorkflow(tx, b.errorWorkflowId, id);
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
    let updated = await tx.workflow.update({
      where: { id },
      data: {
        name: b.name,
        description: b.description,
        tags: b.tags,
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
    if (DEFINITION_FIELDS.some((f) => b[f] !== undefined) || b.versionMessage !== undefined) {
      updated = await recordVersion(tx, updated, author, b.versionMessage ?? null, versionsKeep);
    }
    const change = updated.active === current.active ? 'updated' : updated.active ? 'activated' : 'deactivated';
    await announceWorkflowChange(tx, change, updated, now());
    return updated;
  };

  app.get(
    '/workflows/:id/versions',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: "List a workflow's versions, newest first",
        params: IdParams,
        querystring: ListWorkflowVersionsQuery,
        response: { 200: Page(WorkflowVersionSummary), ...errorResponses },
      },
    },
    async (req) => {
      const page = offsetPage(`workflow-versions:${req.params.id}`, req.query.cursor, req.query.limit);
      const rows = await asUser(prisma, req.identity.userId, async (tx) => {
        const wf = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true } });
        if (!wf) throw notFound('Workflow');
        return tx.workflowVersion.findMany({ where: { workflowId: wf.id }, orderBy: { number: 'desc' }, skip: page.skip, take: page.take });
      });
      return page.toPage(rows, toVersionSummary);
    },
  );

  app.get(
    '/workflows/:id/versions/:n',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'Get one version of a workflow: its whole definition as saved',
        params: WorkflowVersionParams,
        response: { 200: WorkflowVersion, ...errorResponses },
      },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) =>
        tx.workflowVersion.findUnique({ where: { workflowId_number: { workflowId: req.params.id, number: req.params.n } } }),
      );
      if (!row) throw notFound('Workflow version');
      const v = toVersion(row);
      return allows(req.identity.scope, 'write') ? v : { ...v, definition: { ...v.definition, graph: maskGraphSecrets(v.definition.graph) } };
    },
  );

  app.post(
    '/workflows/:id/versions/:n/restore',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Restore a version: the workflow gets its definition back, saved as a new version',
        params: WorkflowVersionParams,
        response: { 200: Workflow, ...errorResponses },
      },
    },
    async (req) => {
      const { id, n } = req.params;
      const row = await asUser(prisma, req.identity.userId, async (tx) => {
        const v = await tx.workflowVersion.findUnique({ where: { workflowId_number: { workflowId: id, number: n } } });
        if (!v) throw notFound('Workflow version');
        const d = toVersion(v).definition;
        return saveUpdate(
          tx,
          id,
          {
            name: d.name,
            description: d.description,
            triggerType: d.triggerType,
            triggerConfig: d.triggerConfig,
            graph: d.graph,
            requireWebhookSecret: d.requireWebhookSecret,
            executionOrder: d.executionOrder,
            errorWorkflowId: d.errorWorkflowId,
            retention: d.retention,
            versionMessage: `Restored version ${n}`,
          },
          authorOf(req.identity),
        );
      })
        .then(published)
        .catch((e: unknown) => mapPrismaError(e, 'Workflow'));
      return map(row);
    },
  );
  const json = (v: unknown) => v as Prisma.InputJsonValue;

  app.get(
    '/workflows',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List workflows', querystring: ListWorkflowsQuery, response: { 200: Page(Workflow), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, active, triggerType, q, tag, sort = 'created' } = req.query;
      // Each order pages by keyset on its own key and the id (docs/workspace-api.md, "Pagination").
      const page: WorkflowListPage =
        sort === 'created'
          ? keysetPage('workflows', cursor, limit)
          : sort === 'updated'
            ? valuePage('workflows:updated', cursor, limit, {
                field: 'updatedAt',
                dir: 'desc',
                key: (r) => (r.updatedAt as Date).toISOString(),
                parse: (v) => {
                  const at = new Date(v);
                  if (Number.isNaN(at.getTime())) throw new HttpError('validation_failed', 'querystring.cursor is not a cursor this API returned');
                  return at;
                },
              })
            : valuePage('workflows:name', cursor, limit, { field: 'nameKey', dir: 'asc', key: (r) => String(r.nameKey), parse: (v) => v });
      const and: Prisma.WorkflowWhereInput[] = [page.where];
      if (active !== undefined) and.push({ active });
      if (triggerType) and.push({ triggerType });
      if (tag) and.push({ tags: { has: tag } });
      if (q) and.push({ OR: [{ name: containsText(q) }, { description: containsText(q) }, { tags: { has: q.trim() } }] });
      const rows = await asUser(prisma, req.identity.userId, (tx) => tx.workflow.findMany({ where: { AND: and }, orderBy: page.orderBy, take: page.take }));
      return page.toPage(rows, mapFor(req.identity.scope));
    },
  );

  /**
   * Creates a workflow (POST /workflows, an import) in the caller's transaction: version 1 with
   * `message`, announced. A webhook trigger gets a new secret, answered once.
   */
  const createWorkflow = async (
    tx: Tx,
    identity: Parameters<typeof authorOf>[0],
    b: CreateWorkflow,
    extra: { message?: string; samplePayload?: Record<string, unknown> | null } = {},
  ) => {
    if (b.errorWorkflowId) await checkErrorWorkflow(tx, b.errorWorkflowId, null);
    // A sample given at creation (a template's) or carried by an imported file is pinned.
    const sample = b.sample
      ? pinnedColumns(b.sample.payload, b.sample.source ?? 'typed', b.sample.runId ?? null, now(), 'body.sample.payload')
      : extra.samplePayload
        ? pinnedColumns(extra.samplePayload, 'import', null, now(), 'workflow.samplePayload')
        : {};
    const secret = b.triggerType === 'webhook' ? SecretBox.generateSecret() : null;
    const inserted = await tx.workflow.create({
      data: {
        ownerId: identity.userId,
        name: b.name,
        description: b.description ?? '',
        tags: b.tags ?? [],
        triggerType: b.triggerType,
        active: b.active ?? false,
        graph: json(b.graph ?? { nodes: [], edges: [] }),
        triggerConfig: json(b.triggerConfig ?? {}),
        requireWebhookSecret: b.requireWebhookSecret ?? true,
        webhookSecretCipher: secret ? secrets.seal(secret) : null,
        executionOrder: b.executionOrder ?? 'parallel',
        errorWorkflowId: b.errorWorkflowId ?? null,
        ...retentionColumns(b.retention),
        ...sample,
      },
    });
    const created = await recordVersion(tx, inserted, authorOf(identity), extra.message ?? null, versionsKeep);
    await announceWorkflowChange(tx, 'created', created, now());
    return { row: created, webhookSecret: secret };
  };

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
      const b = req.body;
      if (b.graph) validateGraph(b.graph);
      validateTriggerConfig(b.triggerType, b.triggerConfig ?? {}, b.active ?? false);
      const { row, webhookSecret } = await asUser(prisma, req.identity.userId, (tx) => createWorkflow(tx, req.identity, b)).then(published);
      return reply.code(201).send({ ...map(row), webhookSecret });
    },
  );

  // A workflow as a file and back (docs/workflow-export.md). Export needs only read: the file holds
  // no secret (inline ones masked, credentials named, the webhook secret left out).
  app.get(
    '/workflows/:id/export',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'Export a workflow as a file (graph, trigger, settings, layout, sample; credentials by name, no secrets)',
        params: IdParams,
        response: { 200: WorkflowExport, ...errorResponses },
      },
    },
    async (req, reply) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.workflow.findUnique({ where: { id: req.params.id } }));
      if (!row) throw notFound('Workflow');
      const file = toExport(row, now());
      return reply.header('content-disposition', `attachment; filename="${workflowFileName(row.name)}"`).send(file);
    },
  );

  /** The conversion of an n8n file, by request (set before validation, read by the handler). */
  const fromN8nFiles = new WeakMap<object, N8nImport>();
  app.post(
    '/workflows/import',
    {
      preHandler: app.requireAccess('write'),
      bodyLimit: WORKFLOW_IMPORT_MAX_BYTES,
      schema: {
        tags,
        summary: 'Import a workflow file as a new, inactive workflow; answers what it could not take, per step',
        description:
          'The body is a Flowdesk workflow file, or a workflow exported from n8n (its `nodes` and `connections`, no `format`), converted first (docs/workflow-export.md, "Importing from n8n").',
        body: WorkflowImportBody,
        response: { 201: WorkflowImportResult, ...errorResponses },
      },
      // An n8n file becomes a Flowdesk one before the body's schema is checked, so both meet the same checks.
      preValidation: async (req) => {
        if (!isN8nFile(req.body)) return;
        const converted = fromN8n(req.body);
        fromN8nFiles.set(req, converted);
        req.body = converted.file;
      },
    },
    async (req, reply) => {
      const named = req.body.workflow.errorWorkflowId;
      const n8n = fromN8nFiles.get(req);
      const result = await asUser(prisma, req.identity.userId, async (tx) => {
        const errorWorkflowExists = named ? (await tx.workflow.findUnique({ where: { id: named }, select: { id: true } })) !== null : false;
        const read = readImport(req.body, errorWorkflowExists, n8n?.leftOut);
        // The conversion's problems, but none asking for a change to a step readImport then left out.
        const kept = new Set(read.create.graph?.nodes.map((n) => n.id));
        if (n8n) read.problems.unshift(...n8n.problems.filter((p) => p.kind === 'left_out' || p.nodeId === null || kept.has(p.nodeId)));
        // A sample above the pin limit is left out rather than refusing the whole file.
        const sampleBytes = read.samplePayload ? Buffer.byteLength(JSON.stringify(read.samplePayload)) : 0;
        if (sampleBytes > SAMPLE_PAYLOAD_MAX_BYTES) {
          read.samplePayload = null;
          read.problems.push({
            nodeId: null,
            kind: 'left_out',
            message: `the sample is ${sampleBytes} bytes as JSON, above the limit of ${SAMPLE_PAYLOAD_MAX_BYTES} (256 KiB): not pinned`,
          });
        }
        const created = await createWorkflow(tx, req.identity, read.create, {
          message: n8n ? 'Imported from n8n' : 'Imported from a file',
          samplePayload: read.samplePayload,
        });
        return { ...created, read };
      }).then(published);
      return reply.code(201).send({
        workflow: { ...map(result.row), webhookSecret: result.webhookSecret },
        problems: result.read.problems,
        credentials: result.read.credentials,
      });
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
      const row = await asUser(prisma, req.identity.userId, (tx) => saveUpdate(tx, req.params.id, req.body, authorOf(req.identity)))
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

  // The pinned sample (docs/console.md, "Pinned sample"): not a definition change (no version, no
  // announcement: the engine's definitions carry no sample), and kept until unpinned — the engine's
  // write of each delivery leaves a pinned sample alone (adapters/sql.ts WorkflowStore).
  app.put(
    '/workflows/:id/sample',
    {
      preHandler: app.requireAccess('write'),
      bodyLimit: SAMPLE_PAYLOAD_MAX_BYTES + 64 * 1024,
      schema: {
        tags,
        summary:
          "Pin a sample: the trigger data the editor's previews, Run now and Run this step use; deliveries no longer replace it (at most 256 KiB as JSON)",
        params: IdParams,
        body: PinSample,
        response: { 200: Workflow, ...errorResponses },
      },
    },
    async (req) => {
      const { payload, source = 'typed', runId = null } = req.body;
      const data = pinnedColumns(payload, source, runId, now(), 'body.payload');
      const row = await asUser(prisma, req.identity.userId, async (tx) => {
        const found = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true } });
        if (!found) throw notFound('Workflow');
        return tx.workflow.update({ where: { id: found.id }, data });
      }).catch((e: unknown) => mapPrismaError(e, 'Workflow'));
      return map(row);
    },
  );

  app.delete(
    '/workflows/:id/sample',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Unpin the sample: it stays until the next delivery replaces it',
        params: IdParams,
        response: { 200: Workflow, ...errorResponses },
      },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, async (tx) => {
        const found = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true } });
        if (!found) throw notFound('Workflow');
        return tx.workflow.update({ where: { id: found.id }, data: { samplePinnedAt: null, sampleSource: null, sampleRunId: null } });
      }).catch((e: unknown) => mapPrismaError(e, 'Workflow'));
      return map(row);
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

/** One page of GET /workflows in any of its orders (keysetPage on the creation time, valuePage on another key). */
interface WorkflowListPage {
  where: Prisma.WorkflowWhereInput;
  orderBy: Prisma.WorkflowOrderByWithRelationInput[];
  take: number;
  toPage<T>(rows: WorkflowRow[], map: (r: WorkflowRow) => T): PageOf<T>;
}

/**
 * The columns of a pinned sample; a sample above SAMPLE_PAYLOAD_MAX_BYTES as JSON is 413 naming the
 * field (the editor, Run now and the dry run send it whole on every use).
 */
function pinnedColumns(payload: Record<string, unknown>, source: SampleSource, runId: string | null, at: Date, field: string) {
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  if (bytes > SAMPLE_PAYLOAD_MAX_BYTES)
    throw new HttpError('payload_too_large', `${field} is ${bytes} bytes as JSON, above the sample limit of ${SAMPLE_PAYLOAD_MAX_BYTES} (256 KiB)`);
  return {
    samplePayload: payload as Prisma.InputJsonValue,
    samplePayloadAt: at,
    samplePinnedAt: at,
    sampleSource: source,
    sampleRunId: runId,
  };
}

/**
 * A workflow's error workflow must be another workflow of the same owner (the query runs as the
 * owner, so another user's workflow is not found): 400 naming the field otherwise.
 */
async function checkErrorWorkflow(tx: Tx, errorWorkflowId: string, self: string | null): Promise<void> {
  if (errorWorkflowId === self) throw new HttpError('validation_failed', 'body.errorWorkflowId must name another workflow, not this one');
  const target = await tx.workflow.findUnique({ where: { id: errorWorkflowId }, select: { id: true } });
  if (!target) throw new HttpError('validation_failed', 'body.errorWorkflowId must name one of your workflows');
}
