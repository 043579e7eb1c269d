// The gateway through the official SDK client: the catalogue, every tool, every resource, every
// prompt, in JSON and SSE answer modes; tool errors; and two users who never see each other's data.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { NODE_TYPES, RESOURCES, TOOLS, propertiesAtEveryDepth } from '@flowdesk/contracts';
import { connectClient, startStack, type Stack, type TestUser } from './helpers/stack.ts';

let stack: Stack;
let owner: TestUser;
let client: Client;

before(async () => {
  stack = await startStack();
  owner = await stack.newUser();
  client = (await connectClient(stack.gatewayUrl, owner.writeKey)).client;
});
after(async () => {
  await client?.close().catch(() => {});
  await stack?.close();
});

const today = () => new Date().toISOString().slice(0, 10);

type Ids = { project: string; task: string; task2: string; entry: string; note: string; workflow: string; run: string; comment: string };

/** Calls a tool and insists on a successful structured result. */
// tools/list leaves output schemas out (their size); the catalogue keeps them, and every result is checked against its tool's.
const ajv = new Ajv({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const OUTPUT_VALIDATORS = new Map<string, ValidateFunction>(TOOLS.map((t) => [t.name, ajv.compile(t.outputSchema)]));

async function call(c: Client, name: string, args: Record<string, unknown> = {}) {
  const res = await c.callTool({ name, arguments: args });
  assert.notEqual(res.isError, true, `${name} failed: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name} has structuredContent`);
  const matches = OUTPUT_VALIDATORS.get(name)!;
  assert.ok(matches(res.structuredContent), `${name}: structuredContent matches the catalogue's output schema: ${ajv.errorsText(matches.errors)}`);
  const text = (res.content as { type: string; text: string }[])[0]!;
  assert.equal(text.type, 'text');
  assert.deepEqual(JSON.parse(text.text), res.structuredContent, `${name}: the text block is the same JSON`);
  return res.structuredContent as any;
}

/** One project, two tasks, an event, a note, a webhook workflow with a run, and a comment for `key`'s user. */
async function seed(c: Client, userId: string, marker: string): Promise<Ids> {
  const project = await call(c, 'create_project', { name: `${marker} project`, color: '#336699' });
  const task = await call(c, 'create_task', { title: `${marker} task`, projectId: project.id, dueDate: today(), tags: ['launch'], priority: 'high' });
  const task2 = await call(c, 'create_task', { title: `${marker} second task` });
  const entry = await call(c, 'create_calendar_entry', { title: `${marker} meeting`, startsAt: new Date(Date.now() + 3_600_000).toISOString() });
  const note = await call(c, 'create_note', { title: `${marker} note`, content: `${marker} content`, tags: ['launch'], projectId: project.id });
  const workflow = await call(c, 'create_workflow', { name: `${marker} hook`, triggerType: 'webhook' });
  const comment = await call(c, 'add_comment', { targetType: 'task', targetId: task.id, body: `${marker} comment` });
  const run = randomUUID();
  await stack.db.exec(`INSERT INTO "engine"."run" (id, owner_id, workflow_id, event_id, status, trigger_payload) VALUES ($1, $2, $3, $4, 'failed', $5)`, [
    run,
    userId,
    workflow.id,
    randomUUID(),
    JSON.stringify({ secret: marker }),
  ]);
  return { project: project.id, task: task.id, task2: task2.id, entry: entry.id, note: note.id, workflow: workflow.id, run, comment: comment.id };
}

/** The smallest workflow n8n's Download writes: a manual trigger alone. */
const N8N_FILE = {
  name: 'From n8n',
  nodes: [{ id: 'n1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} }],
  connections: {},
};

/** Arguments for every tool, in an order where deletions come last. */
const plan = (ids: Ids): [string, Record<string, unknown>][] => [
  ['list_projects', { status: 'active' }],
  ['get_project', { projectId: ids.project }],
  ['update_project', { projectId: ids.project, description: 'Ship it' }],
  ['list_tasks', { projectId: ids.project, sort: 'due_asc' }],
  ['get_task', { taskId: ids.task }],
  ['update_task', { taskId: ids.task, notes: 'Draft first' }],
  ['move_task', { taskId: ids.task2, projectId: ids.project }],
  ['bulk_update_tasks', { ids: [ids.task, ids.task2], set: { priority: 'urgent' } }],
  ['complete_task', { taskId: ids.task2 }],
  ['list_calendar_entries', {}],
  ['get_calendar_entry', { entryId: ids.entry }],
  ['update_calendar_entry', { entryId: ids.entry, location: 'Room 1' }],
  ['list_notes', { tag: 'launch' }],
  ['get_note', { noteId: ids.note }],
  ['update_note', { noteId: ids.note, pinned: true }],
  ['list_workflows', {}],
  ['get_workflow', { workflowId: ids.workflow }],
  ['import_workflow', { file: JSON.stringify(N8N_FILE) }],
  ['update_workflow', { workflowId: ids.workflow, description: 'From the shop' }],
  ['get_workflow_versions', { workflowId: ids.workflow, number: 2 }],
  ['set_workflow_active', { workflowId: ids.workflow, active: true }],
  ['list_workflow_runs', { workflowId: ids.workflow, status: 'failed' }],
  ['get_workflow_run', { runId: ids.run }],
  ['get_latest_workflow_run', { workflowId: ids.workflow }],
  ['get_webhook_trigger', { workflowId: ids.workflow }],
  ['reveal_webhook_secret', { workflowId: ids.workflow }],
  ['regenerate_webhook_secret', { workflowId: ids.workflow }],
  ['search_workspace', { q: 'project' }],
  ['search_notes', { q: 'content' }],
  ['list_tags', {}],
  ['list_tagged_items', { tag: 'launch' }],
  ['tag_task', { taskId: ids.task, tags: ['q3'] }],
  ['untag_task', { taskId: ids.task, tags: ['launch'] }],
  ['list_comments', { targetType: 'task', targetId: ids.task }],
  ['list_recent_activity', { limit: 10 }],
  ['get_workspace_overview', {}],
  ['get_agenda', {}],
  ['get_upcoming', { days: 3 }],
  ['get_profile', {}],
  ['update_profile', { displayName: 'Ada', timezone: 'Europe/Berlin' }],
  ['update_preferences', { weekStartsOn: 'sunday', defaultProjectId: ids.project }],
  ['archive_project', { projectId: ids.project }],
  ['delete_comment', { commentId: ids.comment }],
  ['delete_calendar_entry', { entryId: ids.entry }],
  ['delete_note', { noteId: ids.note }],
  ['delete_task', { taskId: ids.task }],
  ['delete_workflow', { workflowId: ids.workflow }],
  ['delete_project', { projectId: ids.project }],
];

test('initialize answers 2025-11-25 (what the SDK 1.x client asks) with tools, resources and prompts; lists every catalogue tool, 5 + 1 resources (the fifth: the node catalogue), 4 prompts', async () => {
  assert.equal(client.getServerVersion()?.name, 'flowdesk');
  assert.equal((client.transport as { protocolVersion?: string } | undefined)?.protocolVersion, '2025-11-25');
  const caps = client.getServerCapabilities();
  assert.ok(caps?.tools && caps.resources && caps.prompts);
  const { tools } = await client.listTools();
  assert.equal(tools.length, TOOLS.length);
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS.map((t) => t.name).sort());
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.outputSchema, undefined, `${t.name}: output schemas stay out of tools/list (docs/mcp-gateway.md)`);
    // readOnlyHint: false is the specification's default and is left out (libs/contracts listedTools).
    assert.ok(t.annotations?.readOnlyHint === true || t.annotations?.readOnlyHint === undefined, t.name);
    for (const [at, p] of propertiesAtEveryDepth(t.inputSchema))
      assert.ok(typeof p.description === 'string' && p.description.trim(), `${t.name} ${at} has a description`);
  }
  assert.equal((await client.listResources()).resources.length, 4);
  assert.deepEqual(
    (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate),
    ['flowdesk://projects/{projectId}'],
  );
  assert.deepEqual(
    (await client.listPrompts()).prompts.map((p) => p.name),
    ['plan_my_week', 'daily_standup', 'sprint_retrospective', 'project_kickoff'],
  );
  assert.deepEqual(await client.ping(), {});
});

test('every tool of the catalogue works, its structuredContent matching its output schema (checked against the catalogue)', async () => {
  const ids = await seed(client, owner.id, 'Alpha');
  const steps = plan(ids);
  const called = new Set(['create_project', 'create_task', 'create_calendar_entry', 'create_note', 'create_workflow', 'add_comment', ...steps.map(([n]) => n)]);
  assert.deepEqual([...called].sort(), TOOLS.map((t) => t.name).sort(), 'the plan covers the whole catalogue');
  const results: Record<string, any> = {};
  for (const [name, args] of steps) results[name] = await call(client, name, args);
  assert.equal(results.get_project.taskCounts.total, 1, 'before move_task brings the second one in');
  assert.equal(results.complete_task.status, 'done');
  assert.equal(results.move_task.projectId, ids.project);
  assert.deepEqual(results.bulk_update_tasks.notFound, []);
  assert.equal(results.get_workflow_run.status, 'failed');
  // update_workflow's save is version 2 of the workflow, read back through the version history tool.
  assert.equal(results.get_workflow_versions.number, 2);
  assert.equal(results.get_workflow_versions.definition.description, 'From the shop');
  // The seeded failed run is the engine's: the overview's run counts come from its summary.
  assert.equal(results.get_workspace_overview.workflows.runsLast24h, 1);
  assert.equal(results.get_workspace_overview.workflows.failedLast24h, 1);
  assert.equal(results.get_latest_workflow_run.run.id, ids.run);
  assert.match(results.get_webhook_trigger.webhook.url, /\/functions\/v1\/webhook-trigger\//);
  assert.notEqual(results.regenerate_webhook_secret.secret, results.reveal_webhook_secret.secret);
  assert.deepEqual(results.tag_task.tags, ['launch', 'q3']);
  assert.deepEqual(results.untag_task.tags, ['q3']);
  assert.equal(results.get_agenda.date, today());
  assert.ok(results.get_agenda.tasksDue.some((t: { id: string }) => t.id === ids.task));
  assert.equal(results.update_preferences.timezone, 'Europe/Berlin');
  assert.deepEqual(results.delete_project, { deleted: true, id: ids.project });
});

test('read every resource (4 workspace views + the project template, listed as the specification counts; the node catalogue unlisted)', async () => {
  const project = await call(client, 'create_project', { name: 'Resource project' });
  await call(client, 'create_task', { title: 'Resource task', projectId: project.id });
  const { resources } = await client.listResources();
  // The specification's catalogue: 5 resources, 4 static and 1 templated.
  assert.deepEqual(
    resources.map((r) => r.uri),
    ['flowdesk://workspace/overview', 'flowdesk://projects', 'flowdesk://tasks', 'flowdesk://calendar'],
  );
  assert.equal(resources.length, RESOURCES.length);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(
    resourceTemplates.map((r) => r.uriTemplate),
    ['flowdesk://projects/{projectId}'],
  );
  // Unlisted, the node catalogue is named where it is needed: the workflow tools' descriptions.
  const { tools } = await client.listTools();
  for (const name of ['get_workflow', 'create_workflow'])
    assert.match(tools.find((t) => t.name === name)!.description ?? '', /flowdesk:\/\/docs\/workflow-nodes/, name);
  for (const r of resources) {
    const res = await client.readResource({ uri: r.uri });
    const content = res.contents[0] as { uri: string; mimeType: string; text: string };
    assert.equal(content.uri, r.uri);
    assert.equal(content.mimeType, r.mimeType);
    if (r.mimeType === 'application/json') assert.ok(JSON.parse(content.text), r.uri);
  }
  // The node catalogue the workflow tools point to: every registered type with its params.
  const catalogue = await client.readResource({ uri: 'flowdesk://docs/workflow-nodes' });
  assert.equal((catalogue.contents[0] as { mimeType: string }).mimeType, 'text/markdown');
  const text = (catalogue.contents[0] as { text: string }).text;
  for (const d of NODE_TYPES) assert.ok(text.includes(`## ${d.label} (\`${d.type}\`)`), d.type);
  assert.match(text, /^- `url` \(required, templated\)/m);
  const one = await client.readResource({ uri: `flowdesk://projects/${project.id}` });
  const body = JSON.parse((one.contents[0] as { text: string }).text);
  assert.equal(body.project.name, 'Resource project');
  assert.deepEqual(
    body.tasks.map((t: { title: string }) => t.title),
    ['Resource task'],
  );
  for (const uri of [`flowdesk://projects/${randomUUID()}`, 'flowdesk://nothing', 'flowdesk://projects/not-an-id']) {
    await assert.rejects(client.readResource({ uri }), (e: McpError) => e.code === -32002 && /Resource not found/.test(e.message), uri);
  }
});

test('get every prompt, rendered from live data; missing or bad arguments → -32602', async () => {
  const project = await call(client, 'create_project', { name: 'Kickoff project', description: 'A new shop' });
  await call(client, 'create_task', { title: 'Pick a domain', projectId: project.id, dueDate: today() });
  const rendered = {
    plan_my_week: await client.getPrompt({ name: 'plan_my_week', arguments: { focus: 'the shop' } }),
    daily_standup: await client.getPrompt({ name: 'daily_standup', arguments: {} }),
    sprint_retrospective: await client.getPrompt({ name: 'sprint_retrospective', arguments: { sprintStart: '2020-01-01' } }),
    project_kickoff: await client.getPrompt({ name: 'project_kickoff', arguments: { projectId: project.id } }),
  };
  for (const [name, p] of Object.entries(rendered)) {
    assert.equal(p.messages[0]!.role, 'user', name);
    assert.equal(p.messages[0]!.content.type, 'text', name);
  }
  const text = (p: (typeof rendered)['plan_my_week']) => (p.messages[0]!.content as { text: string }).text;
  assert.match(text(rendered.plan_my_week), /Pick a domain/);
  assert.match(text(rendered.plan_my_week), /the shop/);
  assert.match(text(rendered.project_kickoff), /Kickoff project[\s\S]*A new shop[\s\S]*Pick a domain/);
  assert.match(text(rendered.daily_standup), /Due today:\n- \[ \] Pick a domain/);
  await assert.rejects(client.getPrompt({ name: 'sprint_retrospective', arguments: {} }), (e: McpError) => e.code === -32602 && /sprintStart/.test(e.message));
  await assert.rejects(
    client.getPrompt({ name: 'project_kickoff', arguments: { projectId: randomUUID() } }),
    (e: McpError) => e.code === -32602 && /not found/i.test(e.message),
  );
  await assert.rejects(client.getPrompt({ name: 'no_such_prompt' }), (e: McpError) => e.code === -32602 && /no_such_prompt/.test(e.message));
});

describe('errors', () => {
  test('an unknown tool is a JSON-RPC error naming it', async () => {
    await assert.rejects(
      client.callTool({ name: 'launch_rockets', arguments: {} }),
      (e: McpError) => e.code === -32602 && /Unknown tool: launch_rockets/.test(e.message),
    );
  });
  test('bad arguments are a tool error (isError, MCP 2025-11-25) saying what was wrong, before anything reaches workspace-api', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['create_task', {}, /title/],
      ['create_task', { title: 'x', dueDate: 'tomorrow' }, /dueDate.*date/],
      ['get_task', { taskId: 'not-a-uuid' }, /taskId.*uuid/],
      ['create_task', { title: 'x', assignee: 'bob' }, /assignee is not a known property/],
      ['list_tasks', { limit: 1000 }, /limit/],
    ];
    for (const [name, args, message] of cases) {
      const res = await client.callTool({ name, arguments: args });
      assert.equal(res.isError, true, `${name} ${JSON.stringify(args)}`);
      const text = (res.content as { text: string }[])[0]!.text;
      assert.ok(message.test(text) && text.startsWith(`Invalid arguments for tool ${name}: `), text);
    }
  });
  test('a failure in workspace-api is a tool result with isError and a useful message', async () => {
    const res = await client.callTool({ name: 'get_task', arguments: { taskId: randomUUID() } });
    assert.equal(res.isError, true);
    assert.match((res.content as { text: string }[])[0]!.text, /Task not found \(not_found\)/);
    const bad = await client.callTool({ name: 'update_profile', arguments: { timezone: 'Mars/Olympus' } });
    assert.equal(bad.isError, true);
    assert.match((bad.content as { text: string }[])[0]!.text, /timezone/);
  });
});

test('projectId null on list_tasks, list_calendar_entries and list_notes means any project, as leaving it out does (models send null for a filter they do not want)', async () => {
  const { client: c } = await connectClient(stack.gatewayUrl, (await stack.newUser()).writeKey);
  try {
    const project = await call(c, 'create_project', { name: 'Null filter' });
    await call(c, 'create_task', { title: 'in the project', projectId: project.id });
    await call(c, 'create_task', { title: 'in the inbox' });
    await call(c, 'create_calendar_entry', { title: 'meeting', startsAt: new Date(Date.now() + 3_600_000).toISOString(), projectId: project.id });
    await call(c, 'create_note', { title: 'loose note', content: 'x' });
    for (const [name, count] of [
      ['list_tasks', 2],
      ['list_calendar_entries', 1],
      ['list_notes', 1],
    ] as const) {
      const withNull = await call(c, name, { projectId: null });
      assert.equal(withNull.items.length, count, name);
      assert.deepEqual(withNull, await call(c, name, {}), `${name}: null is the same as no filter`);
    }
    assert.equal((await call(c, 'list_tasks', { projectId: project.id })).items.length, 1, 'a project id still filters');
    const { tools } = await c.listTools();
    for (const name of ['list_tasks', 'list_calendar_entries', 'list_notes']) {
      const described = (tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, { description: string }>).projectId!.description;
      assert.match(described, /null or omitted: any project/, name);
    }
  } finally {
    await c.close();
  }
});

test('SSE answer mode: the same calls answered as text/event-stream', async () => {
  const { client: sse } = await connectClient(stack.gatewayUrl, owner.writeKey, { sse: true });
  try {
    assert.equal((await sse.listTools()).tools.length, TOOLS.length);
    const p = await call(sse, 'create_project', { name: 'Over SSE' });
    assert.equal((await call(sse, 'get_project', { projectId: p.id })).name, 'Over SSE');
    assert.equal((await sse.listResources()).resources.length, 4);
    assert.equal((await sse.listPrompts()).prompts.length, 4);
  } finally {
    await sse.close();
  }
});

test("cross-user: every tool that takes an id, given the other user's ids, finds nothing and shows nothing of theirs", async () => {
  const victim = await stack.newUser();
  const { client: victimClient } = await connectClient(stack.gatewayUrl, victim.writeKey);
  const ids = await seed(victimClient, victim.id, 'VictimSecret');
  await victimClient.close();
  const attacker = await stack.newUser();
  const { client: other } = await connectClient(stack.gatewayUrl, attacker.writeKey);
  try {
    const idKeys = ['projectId', 'taskId', 'entryId', 'noteId', 'workflowId', 'runId', 'commentId', 'targetId', 'ids'];
    const takesId = plan(ids).filter(([name]) => {
      const props = Object.keys(TOOLS.find((t) => t.name === name)!.inputSchema.properties ?? {});
      return props.some((p) => idKeys.includes(p));
    });
    assert.ok(takesId.length >= 30, `${takesId.length} tools take ids`);
    for (const [name, args] of takesId) {
      const res = await other.callTool({ name, arguments: args });
      const text = JSON.stringify(res);
      assert.doesNotMatch(text, /VictimSecret/, `${name} shows nothing of the victim`);
      if (res.isError) assert.match(text, /not found/i, name);
      else if (name === 'bulk_update_tasks') assert.deepEqual((res.structuredContent as { notFound: string[] }).notFound.sort(), [ids.task, ids.task2].sort());
      else {
        // Only listings filtered by a foreign id may succeed, and they come back empty.
        assert.match(name, /^list_/, `${name} must not succeed on a foreign id`);
        const sc = res.structuredContent as { items?: unknown[] };
        assert.deepEqual(sc.items ?? [], [], name);
      }
    }
    // The victim's data is untouched.
    const { client: again } = await connectClient(stack.gatewayUrl, victim.writeKey);
    const task = await call(again, 'get_task', { taskId: ids.task });
    assert.deepEqual([task.title, task.status, task.tags], ['VictimSecret task', 'todo', ['launch']]);
    assert.equal((await call(again, 'get_workflow', { workflowId: ids.workflow })).active, false);
    await again.close();
  } finally {
    await other.close();
  }
});

test('get_workflow with a read key masks secrets written inline in an HTTP Request node; a write key sees them; credential references stay', async () => {
  const created = await call(client, 'create_workflow', {
    name: 'Inline secrets',
    triggerType: 'webhook',
    graph: {
      nodes: [
        {
          id: 'push',
          type: 'http_request',
          retry: JSON.stringify({ attempts: 3, backoff: 'fixed', delayMs: 500, on: ['5xx', '429'] }),
          params: JSON.stringify({
            method: 'POST',
            url: 'https://bot:pa55-inline@api.example.test/v1?token=t-inline-1',
            headers: { Authorization: 'Bearer sk-inline-2', 'X-Api-Key': 'key-inline-3', 'X-Ref': 'Bearer {{credentials.crm}}' },
            body: { password: 'pw-inline-4', contact: '{{trigger.email}}' },
          }),
        },
      ],
      edges: [{ from: 'trigger', to: 'push' }],
    },
  });
  const reader = (await connectClient(stack.gatewayUrl, owner.readKey)).client;
  try {
    const seen = await call(reader, 'get_workflow', { workflowId: created.id });
    const text = JSON.stringify(seen);
    for (const secret of ['pa55-inline', 't-inline-1', 'sk-inline-2', 'key-inline-3', 'pw-inline-4'])
      assert.ok(!text.includes(secret), `${secret} is masked for a read key`);
    const params = seen.graph.nodes[0].params;
    assert.equal(params.url, 'https://bot:••••@api.example.test/v1?token=••••');
    assert.deepEqual(params.headers, { Authorization: 'Bearer ••••', 'X-Api-Key': '••••', 'X-Ref': 'Bearer {{credentials.crm}}' });
    assert.deepEqual(params.body, { password: '••••', contact: '{{trigger.email}}' });
    const listed = await call(reader, 'list_workflows', {});
    assert.ok(!JSON.stringify(listed).includes('sk-inline-2'), 'nor in the listing');
  } finally {
    await reader.close();
  }
  const full = await call(client, 'get_workflow', { workflowId: created.id });
  assert.equal(full.graph.nodes[0].params.headers.Authorization, 'Bearer sk-inline-2', 'write access reads the graph as written');
  assert.deepEqual(full.graph.nodes[0].retry, { attempts: 3, backoff: 'fixed', delayMs: 500, on: ['5xx', '429'] }, 'the retry policy is kept');
});

test('export and import through MCP: get_workflow asFile is the export file (disabled step included), import_workflow makes an inactive copy from it or from an n8n file; bad JSON is refused by field', async () => {
  const created = await call(client, 'create_workflow', {
    name: 'Carry me',
    triggerType: 'manual',
    graph: {
      nodes: [
        { id: 'shape', type: 'set_fields', params: JSON.stringify({ fields: [{ name: 'a', value: '{{trigger.a}}' }] }) },
        { id: 'ping', type: 'http_request', disabled: true, params: JSON.stringify({ method: 'GET', url: 'https://api.example.test/ping' }) },
      ],
      edges: [
        { from: 'trigger', to: 'shape' },
        { from: 'shape', to: 'ping' },
      ],
    },
  });
  assert.equal(created.graph.nodes[1].disabled, true, 'create_workflow takes disabled');
  const file = await call(client, 'get_workflow', { workflowId: created.id, asFile: true });
  assert.equal(file.format, 'flowdesk.workflow');
  assert.equal(file.workflow.name, 'Carry me');
  assert.equal(file.workflow.graph.nodes[1].disabled, true, 'the file carries the disabled flag');
  const imported = await call(client, 'import_workflow', { file: JSON.stringify(file) });
  assert.notEqual(imported.workflow.id, created.id);
  assert.equal(imported.workflow.active, false);
  assert.deepEqual(imported.workflow.graph, created.graph);
  assert.deepEqual(imported.problems, []);

  const n8n = await call(client, 'import_workflow', {
    file: JSON.stringify({
      ...N8N_FILE,
      name: 'n8n with a disabled step',
      nodes: [
        ...N8N_FILE.nodes,
        {
          id: 'n2',
          name: 'Ping',
          type: 'n8n-nodes-base.httpRequest',
          typeVersion: 4.2,
          position: [200, 0],
          parameters: { url: 'https://api.example.test/x' },
          disabled: true,
        },
      ],
      connections: { Start: { main: [[{ node: 'Ping', type: 'main', index: 0 }]] } },
    }),
  });
  assert.deepEqual(
    n8n.workflow.graph.nodes.map((n: { id: string; disabled?: boolean }) => [n.id, n.disabled]),
    [['ping', true]],
  );
  assert.ok(
    n8n.problems.some((p: { message: string }) => /imported disabled/.test(p.message)),
    JSON.stringify(n8n.problems),
  );

  for (const [bad, message] of [
    ['{not json', /file must be the JSON text of a workflow file/],
    [JSON.stringify({ ...file, formatVersion: 9 }), /formatVersion 9/],
  ] as const) {
    const res = await client.callTool({ name: 'import_workflow', arguments: { file: bad } });
    assert.equal(res.isError, true, bad);
    assert.match((res.content as { text: string }[])[0]!.text, message);
  }
});
