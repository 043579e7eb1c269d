// The one page cursor of every listing (workspace-api's and the engine's runs): what a caller can pass back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, encodeCursor, HttpError } from '../src/index.ts';

const id = '0f8fad5b-d9cb-469f-a165-70867728950e';

test('a cursor round-trips for its own listing and kind, and is refused by another listing or kind with a 400', () => {
  const keyset = encodeCursor({ l: 'workflow-runs', k: 'keyset', t: '2026-11-01T00:00:00.000Z', id });
  assert.deepEqual(decodeCursor('workflow-runs', 'keyset', keyset), { l: 'workflow-runs', k: 'keyset', t: '2026-11-01T00:00:00.000Z', id });
  assert.equal(decodeCursor('workflow-runs', 'keyset', undefined), undefined);
  const refused = (listing: string, kind: 'keyset' | 'offset', raw: string, why: RegExp) =>
    assert.throws(
      () => decodeCursor(listing, kind, raw),
      (e: unknown) => e instanceof HttpError && e.code === 'validation_failed' && why.test(e.message),
    );
  refused('tasks', 'keyset', keyset, /belongs to another listing/);
  refused('workflow-runs', 'offset', keyset, /belongs to another listing/);
  const offset = encodeCursor({ l: 'tasks', k: 'offset', o: 50 });
  assert.deepEqual(decodeCursor('tasks', 'offset', offset), { l: 'tasks', k: 'offset', o: 50 });
  for (const raw of [
    'nope',
    encodeCursor({ l: 'tasks', k: 'offset', o: -1 }),
    encodeCursor({ l: 'x', k: 'keyset', t: 'later', id }),
    Buffer.from('null').toString('base64url'),
  ])
    refused('tasks', 'offset', raw, /not a cursor this API returned/);
});
