// Each run records the workflow version it ran (docs/workflow-versions.md): workspace-api carries the
// newest version number in the definition (workflow.changed events, the definitions API), the engine
// copies it into the run row at the claim, and the runs API answers it as `workflowVersion`. Real
// workspace-api, engine and embedded bus on one database (PGlite, or Postgres with DATABASE_URL).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, userCaller, type EngineStack, type EngineUnderTest } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: EngineUnderTest;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl: engine.url }));
const runs = runsApi(call);

before(async () => {
  stack = await startEngineStack({ keys, receiver: (_req, res) => json(res, 201, { ok: true }) });
  engine = await startEngineOn(stack);
});
after(async () => {
  await engine?.app.close();
  await stack?.close();
});

/** A workflow whose one step posts `{ v }` to the receiver: what a run sent tells which definition it ran. */
const graphSending = (v: number) => ({
  nodes: [{ id: 'send', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/hook`, body: { v, run: '{{trigger.run}}' } } }],
  edges: [{ from: 'trigger', to: 'send' }],
});
/** What the receiver got from the run started with payload `{ run: tag }`: the `v` of the graph it ran. */
const sentBy = (tag: string) => {
  const hit = stack.receiver!.received.map((r) => JSON.parse(r.body || '{}') as { v: number; run: string }).find((b) => b.run === tag);
  return hit?.v;
};

describe('a run records the workflow version it ran', () => {
  test('runs before a save record version 1, runs after it version 2: always the version whose graph they ran', async () => {
    const owner = randomUUID();
    const created = await call(owner, 'POST', '/api/v1/workflows', { name: 'Versioned', triggerType: 'webhook', active: true, graph: graphSending(1) });
    assert.equal(created.status, 201, created.text);
    const wf = created.body as { id: string };

    const first = await runs.finished(owner, (await runs.runNow(owner, wf, { run: 'first' })).id);
    assert.equal(first.status, 'succeeded', JSON.stringify(first));
    assert.equal(first.workflowVersion, 1);
    assert.equal(sentBy('first'), 1);

    const saved = await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { graph: graphSending(2), versionMessage: 'send v2' });
    assert.equal(saved.status, 200, saved.text);
    const versions = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/versions`);
    assert.equal(versions.body.items[0].number, 2);

    // The engine learns of the save through the bus: until it has, a run runs (and records) version 1.
    let n = 0;
    const after = await until('a run of the saved graph', async () => {
      const tag = `after-${n++}`;
      const run = await runs.finished(owner, (await runs.runNow(owner, wf, { run: tag })).id);
      assert.equal(run.workflowVersion, sentBy(tag), 'the recorded version is the one whose graph ran');
      return run.workflowVersion === 2 ? run : undefined;
    });
    assert.equal(after.status, 'succeeded');
    // The list answers it too, and the version it names can be read.
    const listed = (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?limit=100`)).body.items as { id: string; workflowVersion: number | null }[];
    assert.equal(listed.find((r) => r.id === first.id)?.workflowVersion, 1);
    assert.equal(listed.find((r) => r.id === after.id)?.workflowVersion, 2);
    const v2 = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/versions/${after.workflowVersion}`);
    assert.equal(v2.status, 200);
    assert.equal(v2.body.message, 'send v2');
  });

  test('a workflow whose definition carries no version (from before) records null, and the API says so', async () => {
    const owner = randomUUID();
    const created = await call(owner, 'POST', '/api/v1/workflows', { name: 'Old', triggerType: 'webhook', active: false, graph: graphSending(1) });
    const wf = created.body as { id: string };
    // As a workflow from before versions were carried: no number with its row, so none in its events.
    await stack.testDb.db.exec('UPDATE "workspace"."workflow" SET definition_version = NULL WHERE id = $1', [wf.id]);
    // Activation announces the definition again (not a version: the number stays absent).
    assert.equal((await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: true })).status, 200);
    const listed = await call(owner, 'GET', `/api/v1/workflows/${wf.id}`);
    assert.equal(listed.body.active, true);
    let n = 0;
    const run = await until('a run of the announced definition', async () => {
      const tag = `old-${n++}`;
      const r = await runs.finished(owner, (await runs.runNow(owner, wf, { run: tag })).id);
      return r.workflowVersion === null ? r : (assert.equal(r.workflowVersion, 1), undefined);
    });
    assert.equal(run.status, 'succeeded');
    const raw = await call(owner, 'GET', `/api/v1/workflow-runs/${run.id}`);
    assert.ok('workflowVersion' in raw.body, 'the run says it has no version rather than leaving the field out');
    assert.equal(raw.body.workflowVersion, null);
  });
});
