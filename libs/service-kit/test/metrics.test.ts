// The HTTP histogram every service gets from createService, and the separate metrics listener.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createService, listen, listenMetrics } from '../src/index.ts';

test('requests are counted by route template and status, on the metrics port only; /readyz there answers as the service does', async () => {
  const app = createService({ name: 'svc-metrics-test', logLevel: 'silent' });
  app.get('/things/:id', async () => ({ ok: true }));
  const base = await listen(app, 0);
  const metrics = await listenMetrics({ apps: [{ name: 'svc-metrics-test', app }], port: 0, host: '127.0.0.1' });
  try {
    for (const id of ['4f1c2a9e-1b2c-4d3e-8f90-123456789abc', 'another-id']) assert.equal((await fetch(`${base}/things/${id}`)).status, 200);
    assert.equal((await fetch(`${base}/nowhere/123`)).status, 404);

    const text = await (await fetch(`${metrics.url}/metrics`)).text();
    const count = (labels: string) => Number(new RegExp(`^flowdesk_http_request_duration_seconds_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    assert.equal(count('service="svc-metrics-test",method="GET",route="/things/:id",status_code="200"'), 2);
    assert.equal(count('service="svc-metrics-test",method="GET",route="unmatched",status_code="404"'), 1);
    assert.ok(!text.includes('another-id') && !text.includes('4f1c2a9e'), 'no raw path or id in a label');
    assert.match(text, /^process_cpu_user_seconds_total /m);

    assert.equal((await fetch(`${base}/metrics`)).status, 404, 'not on the public port');
    const ready = await fetch(`${metrics.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', service: 'svc-metrics-test' });
    assert.equal((await fetch(`${metrics.url}/metrics/other`)).status, 404);
  } finally {
    await metrics.close();
    await app.close();
  }
});
