import { HttpError } from '@flowdesk/contracts';
import type { PrismaClient } from '../adapters/db.ts';
import { decoyHash, hashPassword, passwordMatches } from './passwords.ts';

export interface User {
  id: string;
  email: string;
  createdAt: Date;
}

export const MIN_PASSWORD_LENGTH = 8;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails compare case-insensitively: `Ann@Example.com` and `ann@example.com` are one account. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const publicUser = (u: { id: string; email: string; createdAt: Date }): User => ({ id: u.id, email: u.email, createdAt: u.createdAt });

export async function createUser(prisma: PrismaClient, input: { email: string; password: string; id?: string }): Promise<User> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw new HttpError('validation_failed', 'email is not an email address');
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new HttpError('validation_failed', `password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const passwordHash = await hashPassword(input.password);
  try {
    return publicUser(await prisma.user.create({ data: { id: input.id, email, passwordHash } }));
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new HttpError('conflict', 'A user with this email exists already');
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

/** The user when email and password match, else null; the same work either way (see decoyHash). */
export async function verifyPassword(prisma: PrismaClient, email: string, password: string): Promise<User | null> {
  const user = await prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
  const ok = await passwordMatches(password, user?.passwordHash ?? (await decoyHash()));
  return user && ok ? publicUser(user) : null;
}

export async function setPassword(prisma: PrismaClient, userId: string, password: string): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new HttpError('validation_failed', `password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  await prisma.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(password) } });
}
