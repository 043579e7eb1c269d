import { HttpError } from './errors.ts';

/**
 * The opaque page cursor of every listing (workspace-api's, the engine's runs): base64url JSON that
 * names the listing it came from, so a cursor of one listing is refused by another instead of
 * silently paging through the wrong rows. Newest-first listings page by keyset on (createdAt, id),
 * the workflows list's other orders by keyset on (their key, id) (`value`), other orders by offset. One encoder and one decoder, here, for both services.
 */
export type PageCursor =
  | { l: string; k: 'keyset'; t: string; id: string }
  | { l: string; k: 'offset'; o: number }
  /** Keyset on another key (a name, an update time as ISO text) and the id: the last row's. */
  | { l: string; k: 'value'; v: string; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const encodeCursor = (c: PageCursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');

/**
 * The cursor a caller passed back, checked: undefined without one; HttpError validation_failed (400)
 * for text that is no cursor of this API, or a cursor of another listing or kind.
 */
export function decodeCursor<K extends PageCursor['k']>(listing: string, kind: K, raw: string | undefined): Extract<PageCursor, { k: K }> | undefined {
  if (raw === undefined) return undefined;
  let c: PageCursor | undefined;
  try {
    c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as PageCursor;
  } catch {
    c = undefined;
  }
  const valid =
    c !== null &&
    typeof c === 'object' &&
    typeof c.l === 'string' &&
    ((c.k === 'keyset' && typeof c.t === 'string' && typeof c.id === 'string' && UUID.test(c.id) && !Number.isNaN(Date.parse(c.t))) ||
      (c.k === 'offset' && Number.isInteger(c.o) && c.o >= 0) ||
      (c.k === 'value' && typeof c.v === 'string' && c.v.length <= 500 && typeof c.id === 'string' && UUID.test(c.id)));
  if (!valid) throw new HttpError('validation_failed', 'querystring.cursor is not a cursor this API returned');
  if (c!.l !== listing || c!.k !== kind) throw new HttpError('validation_failed', 'querystring.cursor belongs to another listing');
  return c as Extract<PageCursor, { k: K }>;
}
