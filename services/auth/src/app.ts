import { createService, type Service } from '@flowdesk/service-kit';

export interface AuthDeps {
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  /** Clock port, so time-dependent behaviour can be tested without waiting. */
  clock?: () => Date;
}

export async function buildApp(deps: AuthDeps = {}): Promise<Service> {
  return createService({ name: 'auth', logLevel: deps.logLevel });
}
