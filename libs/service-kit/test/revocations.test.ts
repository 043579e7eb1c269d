// The revocation subscription's consumer group is per process (every replica evicts its own caches),
// but its metrics must not be: the bus metrics' `group` label is the same stable value for every
// process, so a restart adds no series (issue 22, item 8; docs/observability.md).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createEmbeddedBus, type EmbeddedEventBus, type Subscription } from '@flowdesk/bus';
import { CREDENTIAL_REVOKED_TOPIC, type CredentialRevoked } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { metricsText } from '@flowdesk/telemetry';
import { until } from '../src/testing.ts';
import { AuthClient, revocationGroupId, subscribeToRevocations } from '../src/index.ts';

let testDb: TestDatabase;
let bus: EmbeddedEventBus;
before(async () => {
  testDb = await createTestDatabase();
  bus = await createEmbeddedBus(testDb.db, { pollIntervalMs: 25 });
});
after(async () => {
  await bus?.close();
  await testDb?.close();
});

const quiet = { info() {}, debug() {}, warn() {} };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

test('two processes (two subscriptions) get groups of their own, and their delivery metrics one stable group label without a UUID', async () => {
  assert.notEqual(revocationGroupId('svc-label-test'), revocationGroupId('svc-label-test'), 'each process is its own consumer group');
  const auth = new AuthClient({ url: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y', now: () => new Date(), resource: 'http://r' });
  const handled: string[] = [];
  const subscriptions: Subscription[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const log = { ...quiet, debug: (fields: object) => void handled.push(`${i}:${(fields as { eventId: string }).eventId}`) };
      subscriptions.push(await subscribeToRevocations(bus, auth, log, () => new Date(), 'svc-label-test'));
    }
    const event: CredentialRevoked = {
      eventId: randomUUID(),
      userId: randomUUID(),
      kind: 'api_key',
      clientId: 'key-1',
      revokedAt: new Date().toISOString(),
    };
    await bus.publish(CREDENTIAL_REVOKED_TOPIC, [{ key: event.userId, value: event }]);
    await until('both subscriptions to handle the revocation', () => handled.length === 2);

    const series = (await metricsText())
      .split('\n')
      .filter((l) => l.startsWith('flowdesk_bus_delivery_delay_seconds_count') && l.includes(`topic="${CREDENTIAL_REVOKED_TOPIC}"`));
    assert.deepEqual(
      series.map((l) => /group="([^"]*)"/.exec(l)?.[1]),
      ['svc-label-test-revocations.instance'],
      `one series for both processes: ${series.join(' | ')}`,
    );
    assert.match(series[0]!, / 2$/, 'both deliveries counted in it');
    assert.doesNotMatch(series[0]!, UUID);
  } finally {
    for (const s of subscriptions) await s.close();
    await auth.close();
  }
});
