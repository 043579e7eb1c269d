/**
 * Case-insensitive substring match for Prisma. Prisma's `contains` becomes ILIKE '%value%' without
 * escaping, so a user's `%` or `_` would act as wildcards; escape them (and the escape character).
 */
export function containsText(q: string) {
  return { contains: q.replace(/[\\%_]/g, (c) => `\\${c}`), mode: 'insensitive' as const };
}
