import type { SigningKeys } from '@flowdesk/service-kit';
import type { PrismaClient } from './adapters/db.ts';
import type { ServiceClients } from './domain/service-clients.ts';

/** What the routes share, handed to each route plugin (not decorated: other services decorate `ctx`). */
export interface AuthContext {
  prisma: PrismaClient;
  signingKeys: SigningKeys;
  serviceClients: ServiceClients;
  userIdExchangeClients: readonly string[];
  now: () => Date;
}
