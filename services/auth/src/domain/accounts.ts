import { createHash, randomBytes } from 'node:crypto';
import { HttpError, notFound, type Role, type SignupMode } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { createUser, normalizeEmail, publicUser, type User } from './users.ts';

/**
 * People: the owner created on first run, members added by signup (open, by invitation, or off) or by
 * the owner (CLI `flowdesk users create`), disabled by the owner. docs/auth.md, "Accounts".
 */

export const INVITE_TTL_MS = 7 * 24 * 60 * 60_000;
const INVITE_PREFIX = 'fdi';
const INVITE_FORMAT = new RegExp(`^${INVITE_PREFIX}_[A-Za-z0-9_-]{43}$`);
const hashToken = (token: string) => new Uint8Array(createHash('sha256').update(token, 'utf8').digest());

export const parseSignupMode = (value: string | undefined): SignupMode => {
  const mode = (value ?? 'invite').trim() || 'invite';
  if (mode !== 'open' && mode !== 'invite' && mode !== 'off') throw new Error(`SIGNUP_MODE must be open, invite or off, got "${value}"`);
  return mode;
};

/**
 * First run is over once an owner exists. The embedded start's demo account is a member, so it never
 * counts (docs/console.md, "First run and the demo account").
 */
export async function needsOwner(prisma: PrismaClient): Promise<boolean> {
  return (await prisma.user.count({ where: { role: 'owner' } })) === 0;
}

/** The first-run owner; 409 once an owner exists (a unique index settles concurrent attempts). */
export async function createOwner(prisma: PrismaClient, input: { email: string; name: string; password: string }): Promise<User> {
  if (!(await needsOwner(prisma))) throw new HttpError('conflict', 'Flowdesk is set up already: sign in instead');
  try {
    return await createUser(prisma, { ...input, role: 'owner' });
  } catch (err) {
    // Lost the race against another setup, or the email is taken (the demo account's, say).
    if (err instanceof HttpError && err.code === 'conflict')
      throw new HttpError('conflict', (await needsOwner(prisma)) ? err.message : 'Flowdesk is set up already: sign in instead');
    throw err;
  }
}

const forbiddenSignup = (mode: SignupMode) =>
  new HttpError(
    'forbidden',
    mode === 'off'
      ? 'Sign-up is turned off on this Flowdesk: ask its owner to add you'
      : 'Sign-up needs an invitation for this email: ask the owner of this Flowdesk',
  );

/** Sign-up as a member: open to anyone, or only with an unused, unexpired invitation for this very email. */
export async function signUp(
  prisma: PrismaClient,
  mode: SignupMode,
  input: { email: string; name: string; password: string; inviteToken?: string },
  now: Date,
): Promise<User> {
  if (mode === 'off') throw forbiddenSignup(mode);
  if (mode === 'open') return createUser(prisma, { email: input.email, name: input.name, password: input.password });
  const token = input.inviteToken;
  if (!token || !INVITE_FORMAT.test(token)) throw forbiddenSignup(mode);
  return prisma.$transaction(async (tx) => {
    // Spent in the same transaction as the user is created: used once, and not at all if creation fails.
    const { count } = await tx.invite.updateMany({
      where: { tokenHash: hashToken(token), email: normalizeEmail(input.email), usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (count !== 1) throw forbiddenSignup(mode);
    return createUser(tx, { email: input.email, name: input.name, password: input.password });
  });
}

export async function createInvite(
  prisma: PrismaClient,
  createdBy: string,
  email: string,
  now: Date,
): Promise<{ token: string; email: string; expiresAt: Date }> {
  const normalized = normalizeEmail(email);
  if (await prisma.user.findUnique({ where: { email: normalized } })) throw new HttpError('conflict', 'A user with this email exists already');
  const token = `${INVITE_PREFIX}_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
  await prisma.invite.create({ data: { email: normalized, tokenHash: hashToken(token), createdBy, createdAt: now, expiresAt } });
  return { token, email: normalized, expiresAt };
}

export async function listUsers(prisma: PrismaClient): Promise<User[]> {
  const rows = await prisma.user.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(publicUser);
}

export async function addUser(prisma: PrismaClient, input: { email: string; name: string; password: string; role?: Role }): Promise<User> {
  return createUser(prisma, input);
}

/** Disables (or enables again) a user; 404 for an unknown id. Returns whether anything changed. */
export async function setUserDisabled(prisma: PrismaClient, id: string, disabled: boolean, now: Date): Promise<boolean> {
  const user = await prisma.user.findUnique({ where: { id } });
  if (!user) throw notFound('User');
  const { count } = await prisma.user.updateMany({
    where: { id, disabledAt: disabled ? null : { not: null } },
    data: { disabledAt: disabled ? now : null },
  });
  return count === 1;
}

/** What stops working when a user is disabled, for the revocation events: their live keys and grants. */
export async function liveCredentialsOf(prisma: PrismaClient, userId: string): Promise<{ keyIds: string[]; grantClientIds: string[] }> {
  const [keys, grants] = await Promise.all([
    prisma.apiKey.findMany({ where: { userId, revokedAt: null }, select: { id: true } }),
    prisma.oAuthGrant.findMany({ where: { userId, revokedAt: null }, select: { clientId: true } }),
  ]);
  return { keyIds: keys.map((k) => k.id), grantClientIds: grants.map((g) => g.clientId) };
}
