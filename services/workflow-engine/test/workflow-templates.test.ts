// Every template of the gallery (libs/contracts workflow-templates.ts) is a test: it is accepted by
// workspace-api as a new workflow (the contracts' graph schema, trigger settings, expression syntax),
// uses only registered node types, and runs in the engine on its own sample payload to a succeeded
// run whose actions did what the template says (its HTTP targets answered by a loopback server).
// A template with a Wait parks; the test wakes it as the engine does (the parked run's checkpoints
// and a wake: the timer, Approve or Reject) and checks each way it can go on. The credentials a
// template names are given (Slack's API on the loopback receiver, a real SMTP server for Send Email).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  credentialTypesFor,
  NODE_TYPES,
  nodeLabel,
  WORKFLOW_TEMPLATES,
  type ResumedBy,
  type TriggerEvent,
  type WorkflowGraph,
  type WorkflowTemplate,
} from '@flowdesk/contracts';
import { generateSigningKeys, parseAllowlist, SsrfPolicy } from '@flowdesk/service-kit';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { createSmtpMailer } from '../src/adapters/smtp-mailer.ts';
import { providerSignature } from '@flowdesk/service-kit/testing';
import { checkpointKey, executeWorkflow, type ExecuteWorkflowInput, type RunRecord } from '../src/domain/executor.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import type { CreateTaskInput, CredentialValue } from '../src/domain/ports.ts';
import { fixedClock, json, silentLog, startEngineStack, type EngineStack, type Received, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl: 'http://engine.invalid' }));

const SLACK_TOKEN = 'xoxb-template-test';
const MODEL_KEY = 'sk-template-test';
/** What the stand-in model answers: the triage as JSON (structured output), else the weekly note. */
const TRIAGE = {
  title: 'Fix the checkout: customers cannot pay',
  priority: 'urgent',
  summary: 'No customer can pay since this morning. The checkout fails after the card details.',
};
const WEEKLY_NOTE = 'Two tasks are overdue. Send the invoice first: it is a week late and money waits on it; then renew the domain.';
/** Mails the SMTP server received. */
const mails: ParsedMail[] = [];
let smtp: SMTPServer;
let smtpPort: number;

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    logger: false,
    onData: (stream, _session, cb) =>
      void simpleParser(stream).then(
        (mail) => (mails.push(mail), cb()),
        (err: Error) => cb(err),
      ),
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as { port: number }).port;
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      if (req.url === '/slack-api/chat.postMessage') {
        // Slack's Web API: the bot token as Bearer, ok: false (HTTP 200) for its own errors.
        if (req.headers.authorization !== `Bearer ${SLACK_TOKEN}`) json(res, 200, { ok: false, error: 'invalid_auth' });
        else json(res, 200, { ok: true, channel: 'C0ALERTS', ts: '1736067601.000100' });
      } else if (req.url === '/v1/chat/completions') {
        // An OpenAI-compatible Chat Completions server (the AI templates' openai credential).
        if (req.headers.authorization !== `Bearer ${MODEL_KEY}`) return json(res, 401, { error: { message: 'Incorrect API key provided' } });
        const body = JSON.parse(req.body) as { model: string; response_format?: unknown };
        const content = body.response_format ? JSON.stringify(TRIAGE) : WEEKLY_NOTE;
        json(res, 200, {
          id: 'chatcmpl-t',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 },
        });
      } else if (req.url.startsWith('/items'))
        json(res, 200, {
          items: [
            { title: 'Send invoice', due: '2020-01-01' },
            { title: 'Plan Q3', due: '2999-01-01' },
          ],
        });
      else if (req.url.startsWith('/enrich')) json(res, 200, { company: { name: 'BigCorp', employees: 1200 } });
      else json(res, 200, { ok: true });
    },
  });
});
after(async () => {
  await stack?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

/** A credential of each type a template names, as the person would create it (pointed at the test's servers). */
const credentialFor = (type: string): CredentialValue => {
  if (type === 'slack_bot') return { type, fields: { token: SLACK_TOKEN } };
  if (type === 'openai_compatible') return { type, fields: { baseUrl: `${stack.receiver!.url}/v1`, apiKey: MODEL_KEY, keyHeader: 'bearer' } };
  if (type === 'smtp') return { type, fields: { host: '127.0.0.1', port: String(smtpPort), secure: 'none', from: 'Flowdesk <robot@flowdesk.test>' } };
  throw new Error(`no test credential of type ${type}`);
};

/** The template's graph with its example.com targets pointed at the loopback receiver. */
const onLoopback = (graph: WorkflowGraph): WorkflowGraph =>
  JSON.parse(
    JSON.stringify(graph).replaceAll('https://api.example.com', stack.receiver!.url).replaceAll('https://hooks.example.com', stack.receiver!.url),
  ) as WorkflowGraph;

/** The tasks Find Tasks answers (the workspace as the follow-up template sees it a day later). */
/** What Find Tasks answers for overdue tasks (the weekly mail's sample week). */
const OVERDUE_TASKS = [
  { id: '00000000-0000-4000-8000-000000000009', title: 'Renew the domain', status: 'todo', dueDate: '2026-01-02' },
  { id: '00000000-0000-4000-8000-000000000010', title: 'Send the invoice', status: 'in_progress', dueDate: '2025-12-30' },
];
const FOUND_TASKS = [
  { id: '00000000-0000-4000-8000-000000000008', title: 'Send the quote to BigCorp (old)', status: 'done' },
  { id: '00000000-0000-4000-8000-000000000007', title: 'Send the quote to BigCorp', status: 'todo' },
];

/**
 * Runs the template on its sample. A run that parks at a Wait is woken as process-trigger does it
 * (its steps so far as checkpoints, the parked step executed again with `wake`) by `wakeBy`.
 */
async function run(template: WorkflowTemplate, wakeBy: ResumedBy = 'timer') {
  const tasks: CreateTaskInput[] = [];
  const queries: unknown[] = [];
  const sent: Received[] = stack.receiver!.received;
  const from = sent.length;
  const event: TriggerEvent = {
    eventId: `evt_${randomUUID()}`,
    workflowId: randomUUID(),
    ownerId: randomUUID(),
    source: template.triggerType === 'webhook' ? 'webhook' : template.triggerType,
    receivedAt: '2026-01-05T08:00:00.000Z',
    payload: template.samplePayload,
    headers: { ...template.sampleHeaders },
  };
  // A provider template checks the signature first: its sample arrives signed as the provider signs it.
  const secret =
    template.signature?.preset === 'standard_webhooks' ? `whsec_${Buffer.from('template-test-secret-0123456789').toString('base64')}` : 'template-test-secret';
  if (template.signature) {
    const raw = JSON.stringify(template.samplePayload);
    event.rawBody = Buffer.from(raw).toString('base64');
    Object.assign(event.headers, providerSignature(template.signature.preset, secret, raw, { nowSeconds: Date.parse('2025-03-01T10:00:00.000Z') / 1000 }));
  }
  const credentials = new Map<string, CredentialValue | string>((template.credentials ?? []).map((c) => [c.name, credentialFor(c.type)]));
  if (template.signature) credentials.set(template.signature.credential, secret);
  const unused = () => Promise.reject(new Error('not used by the templates'));
  const execute = (more: Pick<ExecuteWorkflowInput, 'resume'> = {}) =>
    executeWorkflow({
      workflow: { id: event.workflowId, ownerId: event.ownerId, graph: onLoopback(template.graph) },
      event,
      ports: {
        credentials,
        http: stack.http,
        mail: createSmtpMailer({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${smtpPort}`)) }),
        createTask: async (_o, input) => (tasks.push(input), { id: `task-${tasks.length}`, ...input }),
        workspace: {
          findTasks: async (_o, query) => (
            queries.push(query),
            { items: (query as { overdue?: boolean }).overdue ? OVERDUE_TASKS : FOUND_TASKS, nextCursor: null }
          ),
          updateTask: unused,
          getTask: unused,
          getProject: unused,
          create: unused,
        },
        clock: fixedClock(),
        log: silentLog,
        deliveries: { claim: async () => true },
        sandbox: inProcessSandbox,
      },
      options: { slackNode: { apiUrl: `${stack.receiver!.url}/slack-api` } },
      ...more,
    });
  let record: RunRecord = await execute();
  const parked = record.parked;
  if (record.status === 'waiting' && parked) {
    const resume = new Map(parked.unsaved.map((c) => [checkpointKey(c.step.nodeId, c.step.item), c]));
    record = await execute({ resume: { checkpoints: resume, wake: { nodeId: parked.nodeId, resumedBy: wakeBy, at: '2026-01-06T08:00:00.000Z' } } });
  }
  return { record, parked, tasks, queries, requests: sent.slice(from) };
}

/** What each template's run must have done on its sample; a template without an entry fails the suite. */
const EXPECTED: Record<string, (r: Awaited<ReturnType<typeof run>>) => void> = {
  'form-to-task': ({ tasks }) => {
    assert.equal(tasks[0]?.title, 'Follow up: Ada Lovelace');
    assert.match(tasks[0]?.dueDate ?? '', /^\d{4}-\d{2}-\d{2}$/);
    assert.match(tasks[0]?.notes ?? '', /^ada@example\.com\n\nPlease call me back/);
  },
  'contact-form-task': ({ tasks }) => {
    assert.equal(tasks[0]?.title, 'Answer Ada Lovelace (Quote)');
    assert.equal(tasks[0]?.notes, 'ada@example.com, 2026-12-04T09:00:00.000Z\n\nPlease call me back about the quote.');
  },
  'github-issue-to-task': ({ tasks }) => assert.equal(tasks[0]?.title, 'acme/app#42: Login button does nothing'),
  'signed-event-to-task': ({ tasks }) => assert.equal(tasks[0]?.title, 'contact.created: ada@example.com'),
  'stripe-payment': ({ tasks }) =>
    assert.deepEqual(
      tasks.map((t) => t.title),
      ['Book payment 49.50 EUR'],
    ),
  'overdue-digest': ({ requests }) => {
    assert.equal(requests.length, 2);
    assert.deepEqual(JSON.parse(requests[1]!.body), { text: '1 overdue: Send invoice' });
  },
  'new-task-chat': ({ requests }) => assert.deepEqual(JSON.parse(requests[0]!.body), { text: 'New task: Write report (priority high, due 2026-01-09)' }),
  'lead-enrichment': ({ tasks, requests }) => {
    assert.match(requests[0]!.url, /^\/enrich\?email=grace(@|%40)bigcorp\.example$/);
    assert.equal(tasks[0]?.title, 'Call Grace Hopper at BigCorp');
    assert.equal(tasks[0]?.notes, 'grace@bigcorp.example: 1200 people (bigcorp.example)');
  },
  'escalate-urgent': ({ requests }) => assert.deepEqual(JSON.parse(requests[0]!.body), { text: 'Urgent and open: Fix checkout (was high)' }),
  'order-lines': ({ tasks }) => {
    assert.equal(tasks[0]?.title, 'Pack order #1001 (4 lines, 79.00 EUR)');
    assert.equal(tasks[0]?.notes, 'For Linus Torvalds:\n2 × Mug (MUG-1)\n1 × T-shirt M (TEE-M)\n3 × Cap (CAP-1)\n4 × Pin (PIN-2)');
  },
  'order-line-tasks': ({ tasks, record }) => {
    assert.deepEqual(
      tasks.map((t) => [t.title, t.notes]),
      [
        ['Pick 2 × Mug (MUG-1)', 'Order A-1002, line 1'],
        ['Pick 1 × T-shirt M (TEE-M)', 'Order A-1002, line 2'],
        ['Pick 3 × Cap (CAP-1)', 'Order A-1002, line 3'],
        ['Ship order A-1002 to Margaret', 'Pick 2 × Mug (MUG-1)\nPick 1 × T-shirt M (TEE-M)\nPick 3 × Cap (CAP-1)'],
      ],
    );
    assert.deepEqual(
      record.steps.filter((s) => s.nodeId === 'task_1').map((s) => s.item),
      [0, 1, 2],
    );
  },
  'expense-approval': ({ parked, tasks, requests }) => {
    assert.equal(parked?.nodeId, 'wait_1', 'parked until Approve or Reject');
    assert.equal(parked?.resumable, true);
    assert.equal(requests.length, 0);
    assert.equal(tasks[0]?.title, 'Pay 240 EUR to Ada Lovelace');
    assert.equal(tasks[0]?.notes, 'Conference ticket (approved 2026-01-06T08:00:00.000Z)');
  },
  'follow-up-open-task': ({ parked, queries, requests }) => {
    const waited = (parked?.until?.getTime() ?? 0) - Date.parse('2025-03-01T10:00:00.000Z'); // fixedClock's start
    assert.ok(waited >= 86_400_000 && waited < 86_401_000, `parked for one day (${waited} ms)`);
    assert.deepEqual(queries, [{ limit: 25, q: 'Send the quote to BigCorp' }]);
    assert.deepEqual(
      requests.map((r) => JSON.parse(r.body)),
      [{ text: 'Not started after a day: Send the quote to BigCorp' }],
    );
  },
  'failed-run-slack': ({ requests, record }) => {
    assert.equal(requests[0]!.url, '/slack-api/chat.postMessage');
    assert.deepEqual(JSON.parse(requests[0]!.body), {
      channel: '#alerts',
      text: ':rotating_light: Run 00000000-0000-4000-8000-000000000006 of workflow 00000000-0000-4000-8000-000000000005 failed at step http_1 (http_request): node "http_1" failed: POST https://api.example.com/orders answered HTTP 500',
    });
    assert.equal((record.steps[0]!.output as { ts: string }).ts, '1736067601.000100');
  },
  'weekly-overdue-email': ({ queries }) => {
    assert.deepEqual(queries, [{ overdue: true, limit: 100 }]);
    const mail = mails.at(-1)!;
    assert.equal(mail.subject, '2 overdue tasks this week');
    assert.equal(mail.from?.value[0]?.address, 'robot@flowdesk.test');
    assert.deepEqual(
      (Array.isArray(mail.to) ? mail.to : [mail.to]).map((a) => a?.text),
      ['you@example.com'],
    );
    assert.equal(mail.text?.trim(), 'Overdue on 2026-01-05:\n\n- Renew the domain (due 2026-01-02)\n- Send the invoice (due 2025-12-30)');
  },
  'ai-triage-request': ({ tasks, requests }) => {
    // The model was asked with the request and the schema; its answer became the task.
    const asked = JSON.parse(requests.find((r) => r.url === '/v1/chat/completions')!.body) as {
      model: string;
      messages: { role: string; content: string }[];
      response_format: { json_schema: { schema: { properties: { priority: { enum: string[] } } } } };
    };
    assert.equal(asked.model, 'gpt-4o-mini');
    assert.equal(
      asked.messages[1]!.content,
      'From: ada@example.com\nSubject: Checkout is down\n\nSince this morning none of our customers can pay: the checkout page shows an error after the card details.',
    );
    assert.deepEqual(asked.response_format.json_schema.schema.properties.priority.enum, ['low', 'medium', 'high', 'urgent']);
    assert.deepEqual(
      tasks.map((t) => [t.title, t.priority, t.notes]),
      [[TRIAGE.title, 'urgent', `${TRIAGE.summary}\n\nFrom ada@example.com: Checkout is down`]],
    );
  },
  'weekly-ai-overdue-summary': ({ queries, requests }) => {
    assert.deepEqual(queries, [{ overdue: true, limit: 100 }]);
    // The model got the overdue list; the mail is its note.
    const asked = JSON.parse(requests.find((r) => r.url === '/v1/chat/completions')!.body) as { messages: { role: string; content: string }[] };
    assert.equal(
      asked.messages[1]!.content,
      'Today is 2026-01-05. My overdue tasks:\n- Renew the domain (due 2026-01-02)\n- Send the invoice (due 2025-12-30)',
    );
    const mail = mails.at(-1)!;
    assert.equal(mail.subject, '2 overdue tasks this week');
    assert.equal(mail.text?.trim(), WEEKLY_NOTE);
  },
  'failed-run-alert': ({ requests }) =>
    assert.match(JSON.parse(requests[0]!.body).text, /^Run 00000000-0000-4000-8000-000000000006 failed at http_1: node "http_1" failed/),
};

test('the gallery holds at least eight templates, unique ids, only registered node types, each with its expectation here', () => {
  assert.ok(WORKFLOW_TEMPLATES.length >= 8, `${WORKFLOW_TEMPLATES.length} templates`);
  assert.equal(new Set(WORKFLOW_TEMPLATES.map((t) => t.id)).size, WORKFLOW_TEMPLATES.length);
  const registered = new Set<string>(NODE_TYPES.map((d) => d.type));
  for (const t of WORKFLOW_TEMPLATES) for (const n of t.graph.nodes) assert.ok(registered.has(n.type), `${t.id}: ${n.type} is not a registered node type`);
  assert.deepEqual(
    WORKFLOW_TEMPLATES.map((t) => t.id).filter((id) => !EXPECTED[id]),
    [],
  );
});

test("every template's Condition and Filter use the current rules + combinator shape (new users see the current form)", () => {
  const legacy = WORKFLOW_TEMPLATES.flatMap((t) =>
    t.graph.nodes
      .filter((n) => (n.type === 'condition' || n.type === 'filter') && !('rules' in n.params && 'combinator' in n.params))
      .map((n) => `${t.id}.${n.id}`),
  );
  assert.deepEqual(legacy, []);
});

test('a template names the credentials its steps take, each of a type that step accepts', () => {
  for (const t of WORKFLOW_TEMPLATES)
    for (const n of t.graph.nodes) {
      const name = (n.params as { credential?: string }).credential;
      if (!name || n.type === 'verify_signature') continue;
      const declared = t.credentials?.find((c) => c.name === name);
      assert.ok(declared, `${t.id}.${n.id}: credential "${name}" is listed in the template's credentials`);
      assert.ok(credentialTypesFor(nodeLabel(n.type)).includes(declared.type as never), `${t.id}.${n.id}: ${declared.type} is taken by ${n.type}`);
    }
});

describe('every template', () => {
  for (const template of WORKFLOW_TEMPLATES) {
    test(`${template.id}: workspace-api accepts it and it runs to success on its sample`, async () => {
      const owner = randomUUID();
      const created = await call(owner, 'POST', '/api/v1/workflows', {
        name: template.name,
        description: template.description,
        triggerType: template.triggerType,
        triggerConfig: template.triggerConfig,
        graph: template.graph,
        active: false,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const result = await run(template);
      assert.equal(result.record.status, 'succeeded', JSON.stringify({ error: result.record.error, steps: result.record.steps }, null, 1));
      // Run here without a caller: a Respond node notes that nobody waits (embedded's provider-webhooks test has the caller).
      const warnings = result.record.warnings.filter((w) => !w.includes('nobody waits for this answer'));
      assert.deepEqual(warnings, [], 'no missing variables on the sample');
      EXPECTED[template.id]!(result);
    });
  }
});

describe('the Wait templates, the other ways they go on', () => {
  const template = (id: string) => WORKFLOW_TEMPLATES.find((t) => t.id === id)!;

  test('expense-approval: Reject or no answer in 3 days tells the requester in the chat, and creates no task', async () => {
    for (const [by, why] of [
      ['reject', 'rejected'],
      ['timeout', 'no answer in 3 days'],
    ] as const) {
      const { record, tasks, requests } = await run(template('expense-approval'), by);
      assert.equal(record.status, 'succeeded', JSON.stringify(record.error));
      assert.deepEqual(record.warnings, []);
      assert.equal(tasks.length, 0);
      assert.deepEqual(
        requests.map((r) => JSON.parse(r.body)),
        [{ text: `Ada Lovelace: your expense of 240 EUR (Conference ticket) was not approved (${why}).` }],
      );
    }
  });

  test('follow-up-open-task: a task done by then is left alone (the run is skipped, nothing posted)', async () => {
    const done = structuredClone(template('follow-up-open-task'));
    (done.samplePayload as { entityId: string }).entityId = FOUND_TASKS[0]!.id;
    const { record, requests } = await run(done);
    assert.equal(record.status, 'skipped');
    assert.equal(requests.length, 0);
  });
});
