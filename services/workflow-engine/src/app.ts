import { createService, type Service } from '@flowdesk/service-kit';

export interface WorkflowEngineDeps {
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  /** Clock port, so time-dependent behaviour can be tested without waiting. */
  clock?: () => Date;
}

export async function buildApp(deps: WorkflowEngineDeps = {}): Promise<Service> {
  return createService({ name: 'workflow-engine', logLevel: deps.logLevel });
}
