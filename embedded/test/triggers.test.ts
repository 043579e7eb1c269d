// The five trigger types end to end on `npm start`'s stack, through the one base URL (issue 15):
// Run now from the public API and from an MCP client (the existing set_workflow_active tool), a
// schedule driven by the engine's clock (the test moves time, it never waits a minute), and note and
// entity triggers from changes made through the public API. On PGlite, and on Postgres with DATABASE_URL.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PATH } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';
import { callJson, until } from '@flowdesk/service-kit/testing';

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;
let token: string;
let now = new Date('2026-06-01T08:00:20.000Z');

const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);

const finishedRuns = async (workflowId: string) =>
  ((await api('GET', `/api/v1/workflows/${workflowId}/runs?limit=100`)).body.items as any[]).filter((r) =>
    ['succeeded', 'failed', 'skipped'].includes(r.status),
  );
const makesTask = (title: string) => ({ nodes: [{ id: 'make', type: 'create_task', params: { title } }], edges: [{ from: 'trigger', to: 'make' }] });
const tasksTitled = async (prefix: string) =>
  ((await api('GET', '/api/v1/tasks?limit=100')).body.items as { title: string }[]).filter((t) => t.title.startsWith(prefix));

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-triggers-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const config = { ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent' }), databaseUrl: database?.url, engineClock: () => now };
  flowdesk = await startEmbedded(config);
  token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
});

after(async () => {
  await flowdesk?.close();
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

test('manual: Run now from /api/v1 and from an MCP client; a run like any other, recorded as manual with who started it', async () => {
  const wf = await api('POST', '/api/v1/workflows', { name: 'By hand', triggerType: 'manual', graph: makesTask('Manual {{trigger.who}}') });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  const started = await api('POST', `/api/v1/workflows/${wf.body.id}/runs`, { payload: { who: 'api' } });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  assert.equal(started.body.triggerType, 'manual');
  assert.equal(started.body.startedBy, flowdesk.userId);

  const client = new Client({ name: 'triggers-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${flowdesk.localUrl}${MCP_PATH}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  try {
    const res = await client.callTool({ name: 'set_workflow_active', arguments: { workflowId: wf.body.id, runNow: { payload: '{"who":"mcp"}' } } });
    assert.notEqual(res.isError, true, JSON.stringify(res.content));
    const run = (res.structuredContent as any).startedRun;
    assert.equal(run.triggerType, 'manual');
    const refused = await client.callTool({ name: 'set_workflow_active', arguments: { workflowId: wf.body.id, runNow: { payload: '[1]' } } });
    assert.equal(refused.isError, true);
    assert.match(JSON.stringify(refused.content), /runNow\.payload must be a JSON object/);
  } finally {
    await client.close();
  }
  const runs = await until('both manual runs', async () => {
    const r = await finishedRuns(wf.body.id);
    return r.length === 2 && r;
  });
  for (const r of runs) {
    assert.equal(r.status, 'succeeded', JSON.stringify(r));
    assert.equal(r.triggerType, 'manual');
  }
  assert.deepEqual((await tasksTitled('Manual ')).map((t) => t.title).sort(), ['Manual api', 'Manual mcp']);
});

test('schedule: every minute by the engine’s clock, one run per tick', async () => {
  const wf = await api('POST', '/api/v1/workflows', {
    name: 'Hourly',
    triggerType: 'schedule',
    active: true,
    triggerConfig: { cron: '* * * * *' },
    graph: makesTask('Tick {{trigger.scheduledFor}}'),
  });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  // The schedule is recorded from the workflow.changed event: move time only once the engine has it.
  await until(
    'the schedule',
    async () => (await flowdesk.db.exec('SELECT 1 FROM "engine"."schedule" WHERE workflow_id = $1 AND enabled', [wf.body.id])).rows.length === 1,
  );
  now = new Date('2026-06-01T08:01:00.300Z');
  await until('the first tick', async () => (await finishedRuns(wf.body.id)).length === 1);
  now = new Date('2026-06-01T08:02:00.300Z');
  const runs = await until('the second tick', async () => {
    const r = await finishedRuns(wf.body.id);
    return r.length === 2 && r;
  });
  assert.deepEqual(runs.map((r) => r.triggerPayload.scheduledFor).sort(), ['2026-06-01T08:01:00.000Z', '2026-06-01T08:02:00.000Z']);
  assert.ok(runs.every((r) => r.triggerType === 'schedule' && r.status === 'succeeded'));
  assert.equal((await api('PATCH', `/api/v1/workflows/${wf.body.id}`, { active: false })).status, 200);
});

test('note and entity: changes through the public API start the matching workflows, once per change', async () => {
  const noteWf = await api('POST', '/api/v1/workflows', {
    name: 'Notes',
    triggerType: 'note',
    active: true,
    triggerConfig: { titleContains: 'idea' },
    graph: makesTask('Follow up {{trigger.note.title}}'),
  });
  const entityWf = await api('POST', '/api/v1/workflows', {
    name: 'Done',
    triggerType: 'entity',
    active: true,
    triggerConfig: { entity: 'task', events: ['completed'] },
    graph: makesTask('Celebrate {{trigger.after.title}}'),
  });
  assert.equal(noteWf.status, 201, JSON.stringify(noteWf.body));
  assert.equal(entityWf.status, 201, JSON.stringify(entityWf.body));
  // Until the engine has the new workflows a change may start nothing: retry with fresh changes.
  await until('a note run', async () => {
    if ((await finishedRuns(noteWf.body.id)).length > 0) return true;
    await api('POST', '/api/v1/notes', { title: `An idea ${Date.now()}` });
    await new Promise((r) => setTimeout(r, 300));
    return false;
  });
  const [noteRun] = await finishedRuns(noteWf.body.id);
  assert.equal(noteRun.triggerType, 'note');
  assert.match(noteRun.triggerPayload.note.title, /^An idea/);
  const task = await api('POST', '/api/v1/tasks', { title: 'Launch' });
  assert.equal((await api('PATCH', `/api/v1/tasks/${task.body.id}`, { status: 'done' })).status, 200);
  const [done] = await until('the completion run', async () => {
    const r = await finishedRuns(entityWf.body.id);
    return r.length >= 1 && r;
  });
  assert.equal(done.triggerType, 'entity');
  assert.equal(done.triggerPayload.before.status, 'todo');
  assert.equal(done.triggerPayload.after.status, 'done');
  await until('the task it made', async () => (await tasksTitled('Celebrate Launch')).length === 1);
});
