import { randomBytes } from 'node:crypto';
import {
  authenticateApiKey,
  createApiKey,
  createPrismaClient,
  createUser,
  findUserByEmail,
  setPassword,
  verifyPassword,
  type PrismaClient,
} from '@flowdesk/auth';
import type { Scope } from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import { readDevFile, updateDevFile } from './dev-file.ts';

export const DEMO_EMAIL = 'demo@flowdesk.local';

export interface DemoAccount {
  userId: string;
  email: string;
  password: string;
  readKey: string;
  writeKey: string;
}

/**
 * The demo user in the auth service and its credentials in dev.json (`email`, `password`,
 * `readKey`, `writeKey`). Whatever dev.json holds that still works is reused, so a restart creates
 * nothing; what is missing or no longer works (a fresh database, a revoked key) is made anew.
 */
export async function ensureDemoAccount(db: Database, home: string, proposedUserId: string): Promise<DemoAccount> {
  const prisma = createPrismaClient(db);
  try {
    const dev = await readDevFile(home);
    const stored = (k: string) => (typeof dev[k] === 'string' ? dev[k] : undefined);
    let password = stored('password');
    // The email is the account: if it exists (dev.json was deleted, the database kept), it is adopted.
    let user = await findUserByEmail(prisma, DEMO_EMAIL);
    if (!user) {
      password ??= randomPassword();
      user = await createUser(prisma, { id: proposedUserId, email: DEMO_EMAIL, password });
    } else if (user.disabled) {
      // The owner disabled the demo account (docs/console.md): it stays so — no new password, no new keys.
      return { userId: user.id, email: DEMO_EMAIL, password: password ?? '', readKey: stored('readKey') ?? '', writeKey: stored('writeKey') ?? '' };
    } else if (!password || !(await verifyPassword(prisma, DEMO_EMAIL, password))) {
      password = randomPassword();
      await setPassword(prisma, user.id, password);
    }
    const account: DemoAccount = {
      userId: user.id,
      email: DEMO_EMAIL,
      password,
      readKey: await workingKeyOr(prisma, user.id, stored('readKey'), 'mcp:read', 'Demo key (read)'),
      writeKey: await workingKeyOr(prisma, user.id, stored('writeKey'), 'mcp:write', 'Demo key (read + write)'),
    };
    await updateDevFile(home, { ...account });
    return account;
  } finally {
    await prisma.$disconnect();
  }
}

async function workingKeyOr(prisma: PrismaClient, userId: string, secret: string | undefined, scope: Scope, name: string): Promise<string> {
  // Checking is not using: the key's "last used" stays what the person did with it.
  const key = secret ? await authenticateApiKey(prisma, secret, new Date(), { recordUse: false }) : null;
  if (key && key.userId === userId && key.scope === scope) return secret!;
  return (await createApiKey(prisma, { userId, name, scope })).secret;
}

const randomPassword = () => randomBytes(18).toString('base64url');
