import { HttpError, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, type Role } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { decoyHash, hashPassword, passwordMatches } from './passwords.ts';

export interface User {
  id: string;
  email: string;
  name: string;
  role: Role;
  disabled: boolean;
  createdAt: Date;
}

export { MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH };
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails compare case-insensitively: `Ann@Example.com` and `ann@example.com` are one account. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

interface UserRow {
  id: string;
  email: string;
  name: string;
  role: string;
  disabledAt: Date | null;
  createdAt: Date;
}

export const publicUser = (u: UserRow): User => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role === 'owner' ? 'owner' : 'member',
  disabled: u.disabledAt !== null,
  createdAt: u.createdAt,
});

/** The password policy (docs/auth.md): 10 to 200 characters, nothing else imposed. */
export function checkPasswordPolicy(password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new HttpError('validation_failed', `${field} must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new HttpError('validation_failed', `${field} must have at most ${MAX_PASSWORD_LENGTH} characters`);
}

export async function createUser(
  prisma: PrismaClient | Parameters<Parameters<PrismaClient['$transaction']>[0]>[0],
  input: { email: string; password: string; id?: string; name?: string; role?: Role },
): Promise<User> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw new HttpError('validation_failed', 'email is not an email address');
  checkPasswordPolicy(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return publicUser(await prisma.user.create({ data: { id: input.id, email, passwordHash, name: (input.name ?? '').trim(), role: input.role ?? 'member' } }));
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') {
      const target = JSON.stringify((err as { meta?: unknown }).meta ?? '');
      if (input.role === 'owner' && !target.includes('email')) throw new HttpError('conflict', 'An owner exists already');
      throw new HttpError('conflict', 'A user with this email exists already');
    }
    throw err;
  }
}

export async function findUserByEmail(prisma: PrismaClient, email: string): Promise<User | null> {
  const user = await prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
  return user && publicUser(user);
}

export async function findUserById(prisma: PrismaClient, id: string): Promise<User | null> {
  const user = await prisma.user.findUnique({ where: { id } });
  return user && publicUser(user);
}

/**
 * The user when email and password match and the account is not disabled, else null; the same work
 * either way (see decoyHash), so the answer says nothing about which accounts exist.
 */
export async function verifyPassword(prisma: PrismaClient, email: string, password: string): Promise<User | null> {
  const user = await prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
  const ok = await passwordMatches(password, user?.passwordHash ?? (await decoyHash()));
  return user && ok && !user.disabledAt ? publicUser(user) : null;
}

/** Whether `password` is the user's current one (a disabled user has none that works). */
export async function passwordOfUserMatches(prisma: PrismaClient, userId: string, password: string): Promise<boolean> {
  const user = await prisma.user.findUnique({ where: { id: userId } });
  const ok = await passwordMatches(password, user?.passwordHash ?? (await decoyHash()));
  return Boolean(user && ok && !user.disabledAt);
}

export async function setPassword(prisma: PrismaClient, userId: string, password: string): Promise<void> {
  checkPasswordPolicy(password);
  await prisma.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(password) } });
}
