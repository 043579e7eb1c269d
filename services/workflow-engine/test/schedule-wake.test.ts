// Schedules wake on events, not polls (issue 40, docs/triggers.md "When a replica looks"): with a
// safety poll of a minute, a schedule saved a few seconds before its first tick still runs on that
// tick, because saving it notifies its next tick (migration 20270310000000_wake_notify) and the
// scheduler re-plans its one timer. Over real HTTP on workspace-api + engine + embedded bus (PGlite,
// or Postgres with DATABASE_URL). The engine's clock runs in real time, shifted to just before a
// minute (schedules are whole minutes), so the test takes seconds.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { buildApp } from '../src/app.ts';
import { json, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
/** The engine's clock: real time plus `shift`. */
let shift = 0;
const clock = () => new Date(Date.now() + shift);
const SAFETY_POLL_MS = 60_000;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

before(async () => {
  stack = await startEngineStack({ keys, receiver: (_req, res) => json(res, 201, { ok: true }) });
  engine = await buildApp({
    bus: stack.bus,
    db: stack.testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http: stack.http,
    workspace: stack.workspace,
    logLevel: 'silent',
    clock,
    samplePayloadIntervalMs: 0,
    scheduler: { pollMs: SAFETY_POLL_MS },
  });
  engineUrl = await listen(engine, 0);
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

test('a schedule saved seconds before its first tick runs on that tick, though the safety poll is a minute', async () => {
  // The engine has looked (at its start) and found nothing: its next look is a minute away.
  const owner = randomUUID();
  // 4 s before a whole minute of the engine's clock: the schedule's first tick.
  const lead = 4_000;
  shift = (((60_000 - lead - (Date.now() % 60_000)) % 60_000) + 60_000) % 60_000;
  const tick = new Date(Math.ceil(clock().getTime() / 60_000) * 60_000);
  const res = await call(owner, 'POST', '/api/v1/workflows', {
    name: 'Every minute',
    triggerType: 'schedule',
    active: true,
    triggerConfig: { cron: '* * * * *', timezone: 'UTC' },
    graph: {
      nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/hook`, body: {} } }],
      edges: [{ from: 'trigger', to: 'notify' }],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const wf = res.body as { id: string };
  const run = await until(
    'the first tick’s run',
    async () => {
      const items = (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?limit=10`)).body.items as any[];
      return items.find((r) => r.triggerType === 'schedule');
    },
    lead + 15_000,
  );
  assert.equal(run.triggerPayload.scheduledFor, tick.toISOString(), 'the first tick after saving');
  const late = Date.parse(run.triggerPayload.firedAt) - tick.getTime();
  assert.ok(late >= 0, 'not before its tick');
  // Without the wake-up the next look would be the safety poll's, up to a minute later.
  assert.ok(late < 3_000, `fired ${late} ms after its tick`);
});
