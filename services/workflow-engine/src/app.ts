import type { EventBus, Subscription } from '@flowdesk/bus';
import { TRIGGER_TOPIC, type TriggerEvent } from '@flowdesk/contracts';
import { createService, type Service } from '@flowdesk/service-kit';
import type { WorkspaceClient } from './adapters/workspace-client.ts';
import type { HttpClient } from './domain/ports.ts';
import type { RunLimits } from './domain/executor.ts';
import { processTriggerEvent } from './domain/process-trigger.ts';

export const ENGINE_GROUP = 'workflow-engine';

export interface WorkflowEngineDeps {
  bus: EventBus;
  workspace: WorkspaceClient;
  /** The SSRF-guarded client of the HTTP Request node (adapters/guarded-http.ts). */
  http: HttpClient;
  /** Events handled at once by this replica (different workflows only: one workflow's events stay in order). */
  concurrency?: number;
  limits?: Partial<RunLimits>;
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  logStream?: { write(line: string): void };
  clock?: () => Date;
}

/**
 * The engine: an HTTP surface for health only, and a consumer of trigger events in the
 * `workflow-engine` group (more replicas share the work; Kafka partitions bound the parallelism).
 * It starts consuming when the app is ready and stops, letting in-flight runs finish, on close.
 */
export async function buildApp(deps: WorkflowEngineDeps): Promise<Service> {
  let subscription: Subscription | undefined;
  const app = createService({
    name: 'workflow-engine',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    readiness: async () => {
      if (!subscription) throw new Error('not consuming');
    },
  });
  const clock = deps.clock ?? (() => new Date());
  app.addHook('onReady', async () => {
    subscription = await deps.bus.subscribe<TriggerEvent>({
      topic: TRIGGER_TOPIC,
      groupId: ENGINE_GROUP,
      concurrency: deps.concurrency ?? 8,
      handler: async (message) => {
        await processTriggerEvent(message.value, { workspace: deps.workspace, http: deps.http, clock, log: app.log, limits: deps.limits });
      },
    });
  });
  app.addHook('onClose', async () => {
    await subscription?.close();
    subscription = undefined;
  });
  return app;
}
