// The session's last use is written at most every SESSION_TOUCH_INTERVAL_MS (not on every request),
// yet the idle hour still holds exactly as documented, and a DELETE or an expiry on one replica is
// refused by every other at once: on Postgres each request reads the row; on PGlite (the default
// here) the replicas share the in-process session cache.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashSessionId, SESSION_IDLE_MS, SESSION_TOUCH_INTERVAL_MS } from '../src/domain/sessions.ts';
import { openRawSession, rawMcp, startStack, type Stack, type TestUser } from './helpers/stack.ts';

let stack: Stack;
let user: TestUser;
let replicas: string[];

before(async () => {
  stack = await startStack();
  user = await stack.newUser();
  replicas = [stack.gatewayUrl, await stack.addGateway()];
});
after(async () => {
  await stack?.close();
});

const ping = { jsonrpc: '2.0', id: 2, method: 'ping', params: {} };
const listTasks = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_tasks', arguments: {} } };
const use = (url: string, session: string, body: unknown = ping) => rawMcp(url, body, { authorization: `Bearer ${user.readKey}`, 'mcp-session-id': session });
/** The recorded last use, straight from the table (epoch ms), or undefined when the row is gone. */
async function lastSeen(session: string): Promise<number | undefined> {
  const { rows } = await stack.db.exec('SELECT last_seen_at FROM gateway.mcp_session WHERE id_hash = $1', [hashSessionId(session)]);
  return rows[0] ? new Date(rows[0].last_seen_at as string).getTime() : undefined;
}
const sec = 1000;
const min = 60 * sec;

describe('recording a session’s use', () => {
  test('the interval is 30 s, within the one-hour idle limit', () => {
    assert.equal(SESSION_TOUCH_INTERVAL_MS, 30 * sec);
    assert.equal(SESSION_IDLE_MS, 60 * min);
  });

  test('a request within 30 s of the recorded use writes nothing; a later one records it', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    const created = await lastSeen(session);
    assert.ok(created);
    stack.advance(10 * sec);
    assert.equal((await use(replicas[0]!, session)).status, 200);
    assert.equal((await use(replicas[1]!, session)).status, 200);
    assert.equal(await lastSeen(session), created, 'not written within the interval, on either replica');
    stack.advance(25 * sec); // 35 s after the recorded use
    assert.equal((await use(replicas[1]!, session)).status, 200);
    const touched = await lastSeen(session);
    assert.ok(touched! >= created + 35 * sec, 'recorded once older than the interval');
  });

  test('bound: 59 min 30 s of real idleness still works even when the last use was not recorded', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    stack.advance(20 * sec);
    assert.equal((await use(replicas[0]!, session)).status, 200, 'not recorded (20 s < 30 s)');
    stack.advance(59 * min + 30 * sec); // real idle 59:30; recorded idle 59:50
    assert.equal((await use(replicas[1]!, session)).status, 200);
    // That use was recorded (older than the interval), so the hour restarts from it.
    stack.advance(59 * min);
    assert.equal((await use(replicas[0]!, session, listTasks)).status, 200);
    stack.advance(61 * min);
    assert.equal((await use(replicas[0]!, session)).status, 404, '61 min idle');
    assert.equal((await use(replicas[1]!, session)).status, 404, '61 min idle, the other replica');
  });

  test('bound: never accepted an hour after the recorded use, even when a later use went unrecorded (so at most 30 s early)', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    const created = await lastSeen(session);
    stack.advance(20 * sec);
    assert.equal((await use(replicas[0]!, session)).status, 200, 'not recorded');
    stack.advance(59 * min + 41 * sec); // 60:01 since the recorded use, 59:41 since the real last one
    assert.equal((await use(replicas[1]!, session)).status, 404);
    assert.equal(await lastSeen(session), created, 'the refused request did not resurrect it');
  });

  test('an expired session is not resurrected by a late touch', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    const created = await lastSeen(session);
    stack.advance(60 * min + 1 * sec);
    assert.equal((await use(replicas[0]!, session)).status, 404);
    assert.equal(await lastSeen(session), created, 'the row was not touched');
  });
});

describe('every replica sees a DELETE and a recorded use at once', () => {
  test('a session used on replica B within the interval (nothing written) is refused by B right after A deletes it', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    assert.equal((await use(replicas[1]!, session, listTasks)).status, 200);
    assert.equal((await use(replicas[1]!, session)).status, 200);
    const del = await rawMcp(replicas[0]!, undefined, { authorization: `Bearer ${user.readKey}`, 'mcp-session-id': session }, 'DELETE');
    assert.equal(del.status, 204);
    for (const [i, url] of replicas.entries()) {
      const res = await use(url, session);
      assert.equal(res.status, 404, `replica ${i}`);
      assert.equal(res.body.error.code, -32001);
    }
    assert.equal(await lastSeen(session), undefined);
  });

  test('a use recorded by one replica keeps the session alive on the other', async () => {
    const session = await openRawSession(replicas[0]!, user.readKey);
    stack.advance(45 * min);
    assert.equal((await use(replicas[1]!, session)).status, 200, 'recorded by B');
    stack.advance(45 * min); // 90 min after creation, 45 after B's use
    assert.equal((await use(replicas[0]!, session)).status, 200, 'A sees B’s record');
  });
});
