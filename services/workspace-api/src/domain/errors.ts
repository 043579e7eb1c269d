import { HttpError } from '@flowdesk/contracts';

/**
 * Prisma's "record not found" (P2025) and "foreign key violated" (P2003) are what row-level
 * security looks like from outside: another user's row does not exist. Both become 404, never 403,
 * so an id's existence never leaks.
 */
export function mapPrismaError(err: unknown, what: string): never {
  const code = (err as { code?: string }).code;
  if (code === 'P2025') throw new HttpError('not_found', `${what} not found`);
  if (code === 'P2003') throw new HttpError('not_found', 'Referenced project not found');
  throw err;
}
