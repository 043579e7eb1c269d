import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { readJsonFile, writePrivateJson } from './files.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `<home>/dev.json`: the demo user and its credentials, for people and scripts to read. */
export const devFilePath = (home: string) => path.join(home, 'dev.json');

export async function readDevFile(home: string): Promise<Record<string, unknown>> {
  const value = await readJsonFile(devFilePath(home));
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Merges `patch` in, keeping every other key (other parts of Flowdesk add theirs). */
export async function updateDevFile(home: string, patch: Record<string, unknown>): Promise<Record<string, unknown>> {
  const next = { ...(await readDevFile(home)), ...patch };
  await writePrivateJson(devFilePath(home), next);
  return next;
}

/** The demo user's id: made on the first start, the same on every later one. */
export async function ensureDemoUser(home: string): Promise<string> {
  const { userId } = await readDevFile(home);
  if (typeof userId === 'string' && UUID.test(userId)) return userId;
  const fresh = randomUUID();
  await updateDevFile(home, { userId: fresh });
  return fresh;
}
