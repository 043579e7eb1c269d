// withUser is the gate every request passes to reach the data: an id that is not a UUID must be turned
// away before any transaction starts or any SQL is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { APP_ROLE, withUser, type RawCapable, type TransactionCapable } from '../src/index.ts';

/** A stand-in client that records what reaches "the database". */
function recordingClient() {
  const calls: { kind: 'transaction' | 'sql'; sql?: string; values?: unknown[] }[] = [];
  const tx: RawCapable = {
    async $executeRawUnsafe(sql: string, ...values: unknown[]) {
      calls.push({ kind: 'sql', sql, values });
      return 1;
    },
  };
  const client: TransactionCapable<RawCapable> = {
    async $transaction(fn) {
      calls.push({ kind: 'transaction' });
      return fn(tx);
    },
  };
  return { client, calls };
}

const NOT_UUIDS = [
  '',
  'alice',
  '42',
  '00000000-0000-0000-0000-00000000000', // one digit short
  '00000000-0000-0000-0000-0000000000000', // one digit long
  '0000000000000000000000000000000000000', // no dashes
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  `${randomUUID()}\n`,
  ` ${randomUUID()}`,
  `${randomUUID()}'; RESET ROLE; --`,
  `' OR owner_id IS NOT NULL OR '`,
];

test('withUser refuses an id that is not a UUID before starting a transaction or sending any SQL', async () => {
  for (const id of NOT_UUIDS) {
    const { client, calls } = recordingClient();
    let ran = false;
    await assert.rejects(
      withUser(client, id, async () => {
        ran = true;
      }),
      (e: Error) => e instanceof TypeError && /UUID/.test(e.message),
      `refused: ${JSON.stringify(id)}`,
    );
    assert.deepEqual(calls, [], `nothing reached the database for ${JSON.stringify(id)}`);
    assert.equal(ran, false, 'the request body never ran');
  }
});

test('withUser accepts a UUID (either case) and passes it to the database as a bound value, not as SQL text', async () => {
  for (const id of [randomUUID(), randomUUID().toUpperCase()]) {
    const { client, calls } = recordingClient();
    const out = await withUser(client, id, async () => 'result');
    assert.equal(out, 'result');
    assert.equal(calls[0]?.kind, 'transaction', 'it runs inside one transaction');
    const sql = calls[1];
    assert.equal(sql?.kind, 'sql');
    assert.deepEqual(sql.values, [id]);
    assert.ok(!sql.sql!.includes(id), 'the id is not spliced into the SQL');
    assert.match(sql.sql!, new RegExp(`set_config\\('role', '${APP_ROLE}', true\\)`), 'the role is set for this transaction only');
    assert.match(sql.sql!, /set_config\('app\.user_id', \$1, true\)/, 'the user is set for this transaction only');
  }
});
