import type { Database } from '@flowdesk/db';
import { listen, type Service } from '@flowdesk/service-kit';
import { buildApp as buildWorkspaceApi } from '@flowdesk/workspace-api';
import { buildApp as buildAuth } from '@flowdesk/auth';
import { buildApp as buildMcpGateway } from '@flowdesk/mcp-gateway';
import { buildApp as buildWebhookIngest } from '@flowdesk/webhook-ingest';
import { buildApp as buildWorkflowEngine } from '@flowdesk/workflow-engine';
import type { EmbeddedKeys } from './keys.ts';
import type { Route } from './routing.ts';

export const SERVICE_NAMES = ['workspace-api', 'auth', 'mcp-gateway', 'webhook-ingest', 'workflow-engine'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The same prefixes the Kubernetes ingress routes; keep the two in step. */
export const PUBLIC_ROUTES: readonly Route[] = [
  { prefix: '/api/', service: 'workspace-api' },
  { prefix: '/functions/v1/mcp-server-v2', service: 'mcp-gateway' },
  { prefix: '/functions/v1/webhook-trigger/', service: 'webhook-ingest' },
  { prefix: '/.well-known/', service: 'auth' },
  { prefix: '/oauth/', service: 'auth' },
  // Key management and Connected Apps, called with the user's own key. Nothing under /internal/ is public.
  { prefix: '/auth/', service: 'auth' },
];

export interface ServiceDeps {
  db: Database;
  keys: EmbeddedKeys;
  publicBaseUrl: string;
  logLevel: string;
}

export interface RunningService {
  name: ServiceName;
  url: string;
  app: Service;
}

const builders: Record<ServiceName, (deps: ServiceDeps) => Promise<Service>> = {
  'workspace-api': (d) =>
    buildWorkspaceApi({ db: d.db, jwtPublicKeyPem: d.keys.signing.publicKeyPem, webhookSecretKey: d.keys.webhookSecretKey, publicBaseUrl: d.publicBaseUrl, logLevel: d.logLevel }),
  auth: (d) => buildAuth({ db: d.db, signingKeys: d.keys.signing, serviceClients: d.keys.serviceClients, logLevel: d.logLevel }),
  'mcp-gateway': (d) => buildMcpGateway({ logLevel: d.logLevel }),
  'webhook-ingest': (d) => buildWebhookIngest({ logLevel: d.logLevel }),
  'workflow-engine': (d) => buildWorkflowEngine({ logLevel: d.logLevel }),
};

/**
 * Every service in this process, each on its own loopback port exactly as it would run alone, so
 * what the front forwards to is the real HTTP surface. If one fails, the started ones are closed.
 */
export async function startServices(deps: ServiceDeps): Promise<RunningService[]> {
  const running: RunningService[] = [];
  try {
    for (const name of SERVICE_NAMES) {
      const app = await builders[name](deps);
      try {
        running.push({ name, app, url: await listen(app, 0, '127.0.0.1') });
      } catch (err) {
        await app.close();
        throw err;
      }
    }
    return running;
  } catch (err) {
    await closeServices(running);
    throw err;
  }
}

export async function closeServices(services: readonly RunningService[]): Promise<void> {
  await Promise.allSettled(services.map((s) => s.app.close()));
}
