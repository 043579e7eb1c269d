import { HttpError, DEFAULT_PAGE_SIZE, type PageOf } from '@flowdesk/contracts';

/**
 * Cursor pagination. The default order (newest first) pages by keyset on (createdAt, id), so pages
 * stay stable while rows are added; other orders page by offset. The cursor is opaque to callers.
 */
type Cursor = { k: 'keyset'; t: string; id: string } | { k: 'offset'; o: number };

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (raw === undefined) return undefined;
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (c.k === 'keyset' && typeof c.t === 'string' && typeof c.id === 'string' && !Number.isNaN(Date.parse(c.t))) return c;
    if (c.k === 'offset' && Number.isInteger(c.o) && c.o >= 0) return c;
  } catch {
    // fall through
  }
  throw new HttpError('validation_failed', 'querystring.cursor is not a cursor this API returned');
}

/** The Prisma pieces for a newest-first keyset page: where clause, order and take. */
export function keysetPage(cursorRaw: string | undefined, limit = DEFAULT_PAGE_SIZE) {
  const c = decodeCursor(cursorRaw);
  if (c && c.k !== 'keyset') throw new HttpError('validation_failed', 'querystring.cursor does not belong to this listing');
  const where = c
    ? { OR: [{ createdAt: { lt: new Date(c.t) } }, { createdAt: new Date(c.t), id: { lt: c.id } }] }
    : {};
  return {
    where,
    orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }],
    take: limit + 1,
    limit,
  };
}

export function offsetPage(cursorRaw: string | undefined, limit = DEFAULT_PAGE_SIZE) {
  const c = decodeCursor(cursorRaw);
  if (c && c.k !== 'offset') throw new HttpError('validation_failed', 'querystring.cursor does not belong to this listing');
  const skip = c?.o ?? 0;
  return { skip, take: limit + 1, limit };
}

/** Cuts the extra row fetched to know whether there is a next page, and builds its cursor. */
export function pageOf<Row extends { id: string; createdAt: Date }, T>(
  rows: Row[],
  limit: number,
  map: (r: Row) => T,
  offset?: number,
): PageOf<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  let nextCursor: string | null = null;
  if (more && last) {
    nextCursor =
      offset === undefined
        ? encodeCursor({ k: 'keyset', t: last.createdAt.toISOString(), id: last.id })
        : encodeCursor({ k: 'offset', o: offset + limit });
  }
  return { items: items.map(map), nextCursor };
}
