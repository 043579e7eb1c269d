// The workspace nodes (Create Task with priority/tags, Update Task, Find Tasks, Get Task, Get Project, Create
// Note, Create Calendar Entry, Add Comment) through the real engine client against a real
// workspace-api: as the owner, under row-level security, side effects once per step key. The engine's
// contract with workspace-api, run both ways: over loopback HTTP (separate containers) and in process
// (the embedded start).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { generateSigningKeys } from '@flowdesk/service-kit';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow } from '../src/domain/executor.ts';
import { fixedClock, fixedEvent, noHttp, silentLog, startEngineStack, userCaller, WORKSPACE_TRANSPORTS, type EngineStack } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl: 'http://127.0.0.1:1' }));

function run(ownerId: string, graph: WorkflowGraph, payload: Record<string, unknown>, eventId = `evt_${randomUUID()}`, workflowId = randomUUID()) {
  const event = { ...fixedEvent(eventId, payload), workflowId, ownerId };
  return executeWorkflow({
    workflow: { id: workflowId, ownerId, graph },
    event,
    ports: {
      http: noHttp,
      createTask: (owner, input, { signal, idempotencyKey }) => stack.workspace.createTask(owner, input, signal, undefined, idempotencyKey),
      workspace: stack.workspace.nodes,
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
    },
  });
}

const chain = (...nodes: WorkflowGraph['nodes']): WorkflowGraph => ({
  nodes,
  edges: nodes.map((n, i) => ({ from: i === 0 ? 'trigger' : nodes[i - 1]!.id, to: n.id })),
});
const output = (record: Awaited<ReturnType<typeof run>>, id: string) => record.steps.find((s) => s.nodeId === id)?.output as any;

for (const workspaceTransport of WORKSPACE_TRANSPORTS)
  describe(`engine → workspace-api ${workspaceTransport}`, () => {
    before(async () => {
      stack = await startEngineStack({ keys, workspaceTransport });
    });
    after(async () => {
      await stack?.close();
    });

    test('create a task with priority and tags, update it, comment on it, find it, read its project', async () => {
      const owner = randomUUID();
      const project = (await call(owner, 'POST', '/api/v1/projects', { name: 'Leads' })).body;
      const graph = chain(
        {
          id: 'task',
          type: 'create_task',
          params: { title: 'Call {{trigger.name}}', projectId: project.id, priority: '{{trigger.priority}}', tags: 'lead, {{trigger.source}}' },
        },
        { id: 'upd', type: 'update_task', params: { taskId: '{{nodes.task.id}}', status: 'in_progress', dueDate: '2026-12-01T10:00:00Z', title: '' } },
        { id: 'comment', type: 'add_comment', params: { taskId: '{{nodes.task.id}}', body: 'Started by the workflow for {{trigger.name}}' } },
        { id: 'find', type: 'find_tasks', params: { tag: '{{trigger.source}}', status: 'in_progress, todo', limit: 10 } },
        { id: 'project', type: 'get_project', params: { projectId: '{{nodes.task.projectId}}' } },
        { id: 'get', type: 'get_task', params: { taskId: '{{nodes.task.id}}' } },
      );
      const record = await run(owner, graph, { name: 'Ada', priority: 'high', source: 'web' });
      assert.equal(record.status, 'succeeded', JSON.stringify(record));
      const task = output(record, 'task');
      assert.equal(task.priority, 'high');
      assert.deepEqual(task.tags, ['lead', 'web']);
      const updated = output(record, 'upd');
      assert.equal(updated.id, task.id);
      assert.equal(updated.status, 'in_progress');
      assert.equal(updated.dueDate, '2026-12-01');
      assert.equal(updated.title, 'Call Ada', 'an empty field changes nothing');
      assert.equal(output(record, 'comment').targetId, task.id);
      const found = output(record, 'find');
      assert.equal(found.count, 1);
      assert.equal(found.items[0].id, task.id);
      assert.equal(output(record, 'project').name, 'Leads');
      const got = output(record, 'get');
      assert.deepEqual([got.id, got.title, got.status, got.dueDate], [task.id, 'Call Ada', 'in_progress', '2026-12-01']);
      const comments = (await call(owner, 'GET', `/api/v1/comments?targetType=task&targetId=${task.id}`)).body;
      assert.equal(comments.items[0].body, 'Started by the workflow for Ada');
    });

    test("another owner's task or project is not found; bad values fail the step with a clear message", async () => {
      const owner = randomUUID();
      const other = randomUUID();
      const theirTask = (await call(other, 'POST', '/api/v1/tasks', { title: 'theirs' })).body;
      const theirProject = (await call(other, 'POST', '/api/v1/projects', { name: 'Theirs' })).body;
      const cases: [WorkflowGraph['nodes'][number], RegExp][] = [
        [{ id: 'n', type: 'update_task', params: { taskId: theirTask.id, status: 'done' } }, /404/],
        [{ id: 'n', type: 'add_comment', params: { taskId: theirTask.id, body: 'sneaky' } }, /404/],
        [{ id: 'n', type: 'get_project', params: { projectId: theirProject.id } }, /404/],
        [{ id: 'n', type: 'get_task', params: { taskId: theirTask.id } }, /404/],
        [{ id: 'n', type: 'get_task', params: { taskId: '{{trigger.nothing}}' } }, /the task id is empty/],
        [{ id: 'n', type: 'create_task', params: { title: 'x', priority: 'very' } }, /priority "very" is not one of/],
        [{ id: 'n', type: 'update_task', params: { taskId: theirTask.id } }, /nothing to change/],
        [{ id: 'n', type: 'find_tasks', params: { status: 'open' } }, /status "open"/],
        [{ id: 'n', type: 'create_calendar_entry', params: { title: 'x', startsAt: 'tomorrow' } }, /400/],
      ];
      for (const [node, message] of cases) {
        const record = await run(owner, chain(node), {});
        assert.equal(record.status, 'failed', node.type);
        assert.match(record.steps[0]!.error ?? '', message, node.type);
      }
      assert.equal((await call(other, 'GET', `/api/v1/tasks/${theirTask.id}`)).body.status, 'todo', 'their task is unchanged');
      assert.equal((await call(other, 'GET', `/api/v1/comments?targetType=task&targetId=${theirTask.id}`)).body.items.length, 0);
    });

    test('a step executed again (the same run) creates nothing new: notes, calendar entries and comments keep their step key', async () => {
      const owner = randomUUID();
      const task = (await call(owner, 'POST', '/api/v1/tasks', { title: 'mine' })).body;
      const graph = chain(
        { id: 'note', type: 'create_note', params: { title: 'Call with {{trigger.name}}', content: 'went well', tags: 'call' } },
        { id: 'meeting', type: 'create_calendar_entry', params: { title: 'Follow-up', startsAt: '2026-12-01' } },
        { id: 'comment', type: 'add_comment', params: { taskId: task.id, body: 'see {{nodes.note.id}}' } },
      );
      const workflowId = randomUUID();
      const first = await run(owner, graph, { name: 'Ada' }, 'evt-1', workflowId);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.equal(output(first, 'meeting').startsAt, '2026-12-01T00:00:00.000Z');
      const again = await run(owner, graph, { name: 'Ada' }, 'evt-1', workflowId);
      for (const id of ['note', 'meeting', 'comment']) assert.equal(output(again, id).id, output(first, id).id, id);
      assert.equal((await call(owner, 'GET', '/api/v1/notes')).body.items.length, 1);
      assert.equal((await call(owner, 'GET', '/api/v1/calendar-entries')).body.items.length, 1);
      const other = await run(owner, graph, { name: 'Bob' }, 'evt-2', workflowId);
      assert.notEqual(output(other, 'note').id, output(first, 'note').id, 'another event is another row');

      // Many runs of one owner at once: batched, each gets its own row.
      const many = await Promise.all(Array.from({ length: 20 }, (_, i) => run(owner, chain(graph.nodes[0]!), { name: `N${i}` })));
      assert.equal(new Set(many.map((r) => output(r, 'note').id)).size, 20);
      assert.equal((await call(owner, 'GET', '/api/v1/notes?limit=100')).body.items.length, 22);
    });

    test("the engine's own reads and writes: a workflow's definition (null when there is none), the definitions' pages, the sample payload", async () => {
      const owner = randomUUID();
      const graph = chain({ id: 't', type: 'create_task', params: { title: 'x' } });
      const wf = (await call(owner, 'POST', '/api/v1/workflows', { name: 'defs', triggerType: 'webhook', active: true, graph })).body;
      const definitions = stack.workspace.definitions!;
      const def = await definitions.get(wf.id);
      assert.deepEqual([def?.id, def?.ownerId, def?.active, def?.graph.nodes[0]?.id], [wf.id, owner, true, 't']);
      assert.equal(await definitions.get(randomUUID()), null);
      const seen: string[] = [];
      for (let after: string | undefined, page; (page = await definitions.page(after)); after = page.next ?? undefined) {
        seen.push(...page.items.map((d) => d.id));
        if (!page.next) break;
      }
      assert.ok(seen.includes(wf.id), 'the pages list the workflow');
      await stack.workspace.setSamplePayload(owner, wf.id, { n: 1 });
      assert.deepEqual((await call(owner, 'GET', `/api/v1/workflows/${wf.id}`)).body.samplePayload, { n: 1 });
      await assert.rejects(stack.workspace.setSamplePayload(owner, randomUUID(), { n: 1 }), /404/);
    });

    test('Find Tasks: limit and returnAll read past the first page of 100 (cursor followed); hasMore says when more matched', async () => {
      const owner = randomUUID();
      const made: string[] = [];
      for (let i = 0; i < 205; i += 25) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(25, 205 - i) }, (_, j) => call(owner, 'POST', '/api/v1/tasks', { title: `t${i + j}`, tags: ['bulk'] })),
        );
        made.push(...batch.map((r) => r.body.id as string));
      }
      await call(owner, 'POST', '/api/v1/tasks', { title: 'other' });
      const find = (params: Record<string, unknown>) => run(owner, chain({ id: 'find', type: 'find_tasks', params: { tag: 'bulk', ...params } }), {});

      const all = output(await find({ returnAll: true }), 'find');
      assert.equal(all.count, 205);
      assert.equal(all.hasMore, false);
      assert.deepEqual(new Set(all.items.map((t: any) => t.id)), new Set(made), 'every match once, none twice');

      const some = output(await find({ limit: 150 }), 'find');
      assert.equal(some.count, 150);
      assert.equal(some.hasMore, true);
      assert.deepEqual(
        some.items.map((t: any) => t.id),
        all.items.slice(0, 150).map((t: any) => t.id),
        'newest first, as the list',
      );

      const first = output(await find({}), 'find');
      assert.equal(first.count, 25, 'the default limit');
      assert.equal(first.hasMore, true);
      const exact = output(await find({ limit: 205 }), 'find');
      assert.equal(exact.count, 205);
      assert.equal(exact.hasMore, false);
    });
  });
