import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor, type PageOf } from '@flowdesk/contracts';

/**
 * Cursor pagination. Newest-first listings page by keyset on (createdAt, id), so pages stay stable
 * while rows are added; other orders page by offset. The cursor is opaque to callers and names the
 * listing it came from, so a cursor of one listing is refused by another instead of silently
 * paging through the wrong rows (encodeCursor / decodeCursor in libs/contracts, shared with the engine's runs).
 */
/** Cuts the extra row fetched to learn whether a next page exists. */
function cut<Row>(rows: Row[], limit: number): { items: Row[]; more: boolean } {
  return rows.length > limit ? { items: rows.slice(0, limit), more: true } : { items: rows, more: false };
}

/** Newest first: the Prisma where/orderBy/take for one page, and how to turn its rows into a Page. */
export function keysetPage(listing: string, cursorRaw: string | undefined, limit = DEFAULT_PAGE_SIZE) {
  const c = decodeCursor(listing, 'keyset', cursorRaw);
  return {
    where: c ? { OR: [{ createdAt: { lt: new Date(c.t) } }, { createdAt: new Date(c.t), id: { lt: c.id } }] } : {},
    /** The same position for SQL: rows strictly before (createdAt, id) in newest-first order. */
    after: c ? { createdAt: new Date(c.t), id: c.id } : undefined,
    orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }],
    take: limit + 1,
    toPage<Row extends { id: string; createdAt: Date }, T>(rows: Row[], map: (r: Row) => T): PageOf<T> {
      const { items, more } = cut(rows, limit);
      const last = items[items.length - 1];
      return {
        items: items.map(map),
        nextCursor: more && last ? encodeCursor({ l: listing, k: 'keyset', t: last.createdAt.toISOString(), id: last.id }) : null,
      };
    },
  };
}

/** Any other order: skip/take for one page, and how to turn its rows into a Page. */
export function offsetPage(listing: string, cursorRaw: string | undefined, limit = DEFAULT_PAGE_SIZE) {
  const c = decodeCursor(listing, 'offset', cursorRaw);
  const skip = c?.o ?? 0;
  return {
    skip,
    take: limit + 1,
    toPage<Row, T>(rows: Row[], map: (r: Row) => T): PageOf<T> {
      const { items, more } = cut(rows, limit);
      return { items: items.map(map), nextCursor: more ? encodeCursor({ l: listing, k: 'offset', o: skip + limit }) : null };
    },
  };
}

/**
 * Keyset on another key than the creation time (the workflows list by update time or name): rows
 * strictly after the last row's (key, id) in the order asked for, so a page stays right while rows
 * are added or changed (a changed row moves, it is not seen twice). `key` reads a row's key as text
 * for the cursor, `parse` turns the cursor's text back into the column's value.
 */
export function valuePage<Field extends string>(
  listing: string,
  cursorRaw: string | undefined,
  limit: number = DEFAULT_PAGE_SIZE,
  order: { field: Field; dir: 'asc' | 'desc'; key: (row: Record<Field, unknown>) => string; parse: (v: string) => unknown },
) {
  const c = decodeCursor(listing, 'value', cursorRaw);
  const beyond = order.dir === 'asc' ? 'gt' : 'lt';
  const value = c ? order.parse(c.v) : undefined;
  return {
    where: c ? { OR: [{ [order.field]: { [beyond]: value } }, { [order.field]: value, id: { [beyond]: c.id } }] } : {},
    orderBy: [{ [order.field]: order.dir }, { id: order.dir }] as { [K in Field | 'id']?: 'asc' | 'desc' }[],
    take: limit + 1,
    toPage<Row extends { id: string } & Record<Field, unknown>, T>(rows: Row[], map: (r: Row) => T): PageOf<T> {
      const { items, more } = cut(rows, limit);
      const last = items[items.length - 1];
      return { items: items.map(map), nextCursor: more && last ? encodeCursor({ l: listing, k: 'value', v: order.key(last), id: last.id }) : null };
    },
  };
}
