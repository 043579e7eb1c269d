import type { Database } from '@flowdesk/db';
import { Audience, ErrorBody } from '@flowdesk/contracts';
import { createService, internalAuth, serveOpenApi, type Service } from '@flowdesk/service-kit';
import { createPrismaClient, type PrismaClient } from './adapters/db.ts';
import { NoteStore, ProjectStore, TaskStore, WorkflowStore } from './adapters/sql.ts';
import { SecretBox } from './domain/secret-box.ts';
import { projectRoutes } from './routes/projects.ts';
import { taskRoutes } from './routes/tasks.ts';
import { calendarRoutes } from './routes/calendar.ts';
import { noteRoutes } from './routes/notes.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { DEFAULT_VERSIONS_KEEP } from './domain/versions.ts';
import { workspaceRoutes } from './routes/workspace.ts';
import { internalRoutes } from './routes/internal.ts';
import { engineAsOwnerRoutes } from './routes/engine-as-owner.ts';
import { startOutboxRelay, type OutboxRelay } from './adapters/outbox.ts';
import type { EventPublisher } from '@flowdesk/contracts';
import { commentRoutes } from './routes/comments.ts';
import { profileRoutes } from './routes/profile.ts';

export interface WorkspaceApiDeps {
  /** An opened, migrated database (see migrateWorkspace). */
  db: Database;
  /** PEM public key of the auth service's internal-token signing key. */
  jwtPublicKeyPem: string;
  /** 32-byte key that encrypts webhook secrets at rest (AES-256-GCM). */
  webhookSecretKey: Buffer;
  /** The public base URL webhook endpoint URLs are built from; never a request's Host header. */
  publicBaseUrl: string;
  /** Clock port: "today" for due dates and overview figures. */
  clock?: () => Date;
  logLevel?: string;
  /** Where log lines go (tests capture them); default stdout. */
  logStream?: { write(line: string): void };
  bodyLimit?: number;
  /**
   * Where the outbox relay publishes workflow.changed events (the bus). Without it the events stay in
   * the outbox (tests of routes that do not need them).
   */
  events?: EventPublisher;
  /** How often the relay looks for rows a nudge missed (a crash between commit and publish). */
  outboxPollMs?: number;
  /** Versions kept per workflow, the newest (WORKFLOW_VERSIONS_KEEP; docs/workflow-versions.md). */
  versionsKeep?: number;
}

/** Everything a route needs, decorated on the instance. */
export interface WorkspaceContext {
  prisma: PrismaClient;
  /** The hot routes' SQL through the one-round-trip row-level-security executor (docs/data-and-rls.md). */
  tasks: TaskStore;
  projects: ProjectStore;
  notes: NoteStore;
  workflows: WorkflowStore;
  secrets: SecretBox;
  publicBaseUrl: string;
  now: () => Date;
  outbox: OutboxRelay | undefined;
  versionsKeep: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: WorkspaceContext;
  }
}

export const API_PREFIX = '/api/v1';
/** Service-to-service routes: never behind the public ingress. */
export const INTERNAL_PREFIX = '/internal/v1';

export async function buildApp(deps: WorkspaceApiDeps): Promise<Service> {
  const prisma = createPrismaClient(deps.db);
  const app = createService({
    name: 'workspace-api',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    bodyLimit: deps.bodyLimit,
    readiness: async () => {
      await deps.db.exec('SELECT 1');
    },
  });
  app.decorate('ctx', {
    prisma,
    tasks: new TaskStore(deps.db.queryAsUser),
    projects: new ProjectStore(deps.db.queryAsUser),
    notes: new NoteStore(deps.db.queryAsUser),
    workflows: new WorkflowStore(deps.db.queryAsUser),
    secrets: new SecretBox(deps.webhookSecretKey),
    publicBaseUrl: deps.publicBaseUrl.replace(/\/+$/, ''),
    now: deps.clock ?? (() => new Date()),
    outbox: undefined,
    versionsKeep: deps.versionsKeep ?? DEFAULT_VERSIONS_KEEP,
  } satisfies WorkspaceContext);
  const events = deps.events;
  if (events) {
    app.addHook('onReady', async () => {
      app.ctx.outbox = startOutboxRelay(deps.db, events, {
        pollMs: deps.outboxPollMs,
        onError: (err) => app.log.warn({ err }, 'outbox relay: publishing failed; retrying'),
      });
    });
  }
  app.addHook('onClose', async () => {
    await app.ctx.outbox?.close();
    await prisma.$disconnect();
  });

  app.addSchema(ErrorBody);
  // Also under the API prefix, so it is reachable through the one base URL (/api/ → workspace-api).
  await serveOpenApi(app, {
    title: 'Flowdesk workspace API',
    description:
      'Projects, tasks, calendar entries, notes, workflows, workflow runs, comments and the profile of one user. Every request carries an internal JWT (audience workspace-api) minted by the auth service; row-level security scopes every query to its subject.',
    securitySchemes: { internalJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    security: [{ internalJwt: [] }],
    alsoAt: [`${API_PREFIX}/openapi.json`],
  });

  await app.register(internalAuth, { publicKeyPem: deps.jwtPublicKeyPem, audience: Audience.workspaceApi });
  await app.register(
    async (api) => {
      await api.register(projectRoutes);
      await api.register(taskRoutes);
      await api.register(calendarRoutes);
      await api.register(noteRoutes);
      await api.register(workflowRoutes);
      await api.register(workspaceRoutes);
      await api.register(commentRoutes);
      await api.register(profileRoutes);
    },
    { prefix: API_PREFIX },
  );
  await app.register(internalRoutes, { prefix: INTERNAL_PREFIX });
  await app.register(engineAsOwnerRoutes, { prefix: INTERNAL_PREFIX });
  return app;
}
