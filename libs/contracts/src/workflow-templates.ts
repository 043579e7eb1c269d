/**
 * The template gallery ("Start from a template", docs/console.md): ready workflows for what people
 * automate most, defined here once. The console lists them and creates a workflow from one; each is a
 * test (services/workflow-engine/test/workflow-templates.test.ts validates it against the contracts and
 * runs it in the engine on its sample payload, HTTP targets on a loopback server).
 *
 * A template uses only registered node types (the test fails otherwise). URLs point at example.com:
 * the person replaces them before activating (the editor says so under an URL the guard blocks).
 *
 * For each and Wait: `order-line-tasks` (one task per order line, then a summary), `expense-approval`
 * (wait for Approve / Reject) and `follow-up-open-task` (wait a day, look the task up, switch on its
 * status). Their test resumes a parked run the way the engine does (the parked step's checkpoint and a
 * wake).
 */
import type { WorkflowGraph } from './entities/workflows.ts';
import type { TriggerType } from './trigger-types.ts';

export interface WorkflowTemplate {
  /** Stable id (kebab-case), used in the gallery's test ids and links. */
  id: string;
  name: string;
  /** One or two sentences: what it does and what to change before activating. */
  description: string;
  category: 'Forms & webhooks' | 'Payments & orders' | 'Notifications' | 'Tasks' | 'Sales';
  triggerType: TriggerType;
  triggerConfig: Record<string, unknown>;
  graph: WorkflowGraph;
  /** The trigger data a run sees ({{trigger.…}}): the editor's sample until a real one arrives. */
  samplePayload: Record<string, unknown>;
  /** Node types the template shows off (for the gallery's card). */
  uses?: readonly string[];
}

const at = (x: number, y: number) => ({ x, y });
const col = (i: number) => at(0, 140 * (i + 1));

/** Chat webhooks (Slack, Mattermost, Discord, Teams) take a JSON body with `text`. */
const CHAT_URL = 'https://hooks.example.com/services/T000/B000/XXXX';

export const WORKFLOW_TEMPLATES: readonly WorkflowTemplate[] = [
  {
    id: 'form-to-task',
    name: 'Form submission → task',
    description:
      'A contact or request form posts to the webhook; its fields are tidied and a follow-up task is created. Point your form’s action at the workflow’s URL.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Please call me back about the quote.' },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'set_1',
          type: 'set_fields',
          name: 'Tidy the fields',
          position: col(0),
          params: {
            fields: [
              { name: 'name', value: '{{= $trim(trigger.name) }}' },
              { name: 'email', value: '{{= $lowercase($trim(trigger.email)) }}' },
              { name: 'due', value: '{{= $substring($fromMillis($toMillis(now) + 2*86400000), 0, 10) }}' },
            ],
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Follow up',
          position: col(1),
          params: { title: 'Follow up: {{nodes.set_1.name}}', dueDate: '{{nodes.set_1.due}}', notes: '{{nodes.set_1.email}}\n\n{{trigger.message}}' },
        },
      ],
      edges: [
        { from: 'trigger', to: 'set_1' },
        { from: 'set_1', to: 'task_1' },
      ],
    },
  },
  {
    id: 'github-issue-to-task',
    name: 'GitHub issue → task',
    description:
      'A GitHub webhook (issues events) creates a task for each newly opened issue; other actions end the run as skipped. Add the URL under the repository’s Settings → Webhooks.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: {
      action: 'opened',
      issue: { number: 42, title: 'Login button does nothing', html_url: 'https://github.com/acme/app/issues/42', user: { login: 'octocat' } },
      repository: { full_name: 'acme/app' },
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Newly opened?',
          position: col(0),
          params: { left: '{{trigger.action}}', operator: 'equals', right: 'opened' },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Task for the issue',
          position: col(1),
          params: {
            title: '{{trigger.repository.full_name}}#{{trigger.issue.number}}: {{trigger.issue.title}}',
            notes: 'Opened by {{trigger.issue.user.login}}: {{trigger.issue.html_url}}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'task_1', branch: 'true' },
      ],
    },
  },
  {
    id: 'stripe-payment',
    name: 'Stripe payment → task',
    description:
      'A Stripe webhook routes on the event type: a failed payment becomes a task to chase it, a succeeded one a bookkeeping task with the amount. Other events are skipped.',
    category: 'Payments & orders',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: {
      id: 'evt_1',
      type: 'payment_intent.succeeded',
      data: { object: { id: 'pi_1', amount: 4950, currency: 'eur', receipt_email: 'buyer@example.com' } },
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'switch_1',
          type: 'switch',
          name: 'Event type',
          position: col(0),
          params: {
            value: '{{trigger.type}}',
            rules: [
              { operator: 'equals', right: 'payment_intent.succeeded' },
              { operator: 'equals', right: 'payment_intent.payment_failed' },
            ],
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Book the payment',
          position: at(-160, 280),
          params: {
            title: 'Book payment {{= $formatNumber(trigger.data.object.amount / 100, "0.00") }} {{= $uppercase(trigger.data.object.currency) }}',
            notes: 'From {{trigger.data.object.receipt_email}} ({{trigger.data.object.id}})',
          },
        },
        {
          id: 'task_2',
          type: 'create_task',
          name: 'Chase the failed payment',
          position: at(160, 280),
          params: { title: 'Payment failed: {{trigger.data.object.receipt_email}}', notes: 'Stripe payment {{trigger.data.object.id}}' },
        },
      ],
      edges: [
        { from: 'trigger', to: 'switch_1' },
        { from: 'switch_1', to: 'task_1', branch: '1' },
        { from: 'switch_1', to: 'task_2', branch: '2' },
      ],
    },
  },
  {
    id: 'overdue-digest',
    name: 'Daily digest of overdue items',
    description:
      'Every weekday at 08:00 reads a list of open items from an API, keeps the overdue ones and posts a digest to a chat webhook; nothing is posted when none is overdue. Replace both URLs.',
    category: 'Notifications',
    triggerType: 'schedule',
    triggerConfig: { cron: '0 8 * * 1-5', timezone: 'UTC' },
    samplePayload: { scheduledFor: '2026-01-05T08:00:00.000Z', firedAt: '2026-01-05T08:00:01.000Z', cron: '0 8 * * 1-5', timezone: 'UTC', missedTicks: 0 },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Read open items',
          position: col(0),
          params: { method: 'GET', url: 'https://api.example.com/items?status=open' },
        },
        {
          id: 'filter_1',
          type: 'filter',
          name: 'Overdue only',
          position: col(1),
          params: { items: '{{nodes.http_1.body.items}}', field: 'due', operator: 'less_than', right: '{{trigger.scheduledFor}}' },
        },
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Any overdue?',
          position: col(2),
          params: { left: '{{nodes.filter_1.count}}', operator: 'greater_than', right: '0' },
        },
        {
          id: 'http_2',
          type: 'http_request',
          name: 'Post the digest',
          position: col(3),
          params: {
            method: 'POST',
            url: CHAT_URL,
            body: { text: '{{= $string(nodes.filter_1.count) & " overdue: " & $join(nodes.filter_1.items.title, ", ") }}' },
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'http_1' },
        { from: 'http_1', to: 'filter_1' },
        { from: 'filter_1', to: 'condition_1' },
        { from: 'condition_1', to: 'http_2', branch: 'true' },
      ],
    },
  },
  {
    id: 'new-task-chat',
    name: 'New task → chat message',
    description: 'Each task created in the workspace posts a message to a chat webhook (Slack, Mattermost, Discord, Teams). Replace the URL.',
    category: 'Notifications',
    triggerType: 'entity',
    triggerConfig: { entity: 'task', events: ['created'] },
    samplePayload: {
      entity: 'task',
      event: 'created',
      entityId: '00000000-0000-4000-8000-000000000004',
      before: null,
      after: {
        id: '00000000-0000-4000-8000-000000000004',
        title: 'Write report',
        status: 'todo',
        priority: 'high',
        projectId: null,
        dueDate: '2026-01-09',
        notes: '',
        tags: [],
      },
      changedAt: '2026-01-05T09:00:00.000Z',
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Post to chat',
          position: col(0),
          params: {
            method: 'POST',
            url: CHAT_URL,
            body: {
              text: 'New task: {{trigger.after.title}} (priority {{trigger.after.priority}}, due {{= trigger.after.dueDate ? trigger.after.dueDate : "no date" }})',
            },
          },
        },
      ],
      edges: [{ from: 'trigger', to: 'http_1' }],
    },
  },
  {
    id: 'lead-enrichment',
    name: 'Lead enrichment',
    description:
      'A sign-up posts an email; an enrichment API (Clearbit-style) is asked about its company, the useful fields are kept, and a task is created for companies of 50 people or more. Replace the URL and its key.',
    category: 'Sales',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: { email: 'grace@bigcorp.example', name: 'Grace Hopper' },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Enrich the email',
          position: col(0),
          params: { method: 'GET', url: 'https://api.example.com/enrich?email={{trigger.email}}', headers: { accept: 'application/json' } },
        },
        {
          id: 'set_1',
          type: 'set_fields',
          name: 'Keep the useful fields',
          position: col(1),
          params: {
            fields: [
              { name: 'company', value: '{{nodes.http_1.body.company.name}}' },
              { name: 'employees', value: '{{= $number(nodes.http_1.body.company.employees) }}' },
              { name: 'domain', value: '{{= $substringAfter(trigger.email, "@") }}' },
            ],
          },
        },
        {
          id: 'condition_1',
          type: 'condition',
          name: '50 people or more?',
          position: col(2),
          params: { left: '{{nodes.set_1.employees}}', operator: 'greater_than', right: '49' },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Call the lead',
          position: col(3),
          params: {
            title: 'Call {{trigger.name}} at {{nodes.set_1.company}}',
            notes: '{{trigger.email}}: {{nodes.set_1.employees}} people ({{nodes.set_1.domain}})',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'http_1' },
        { from: 'http_1', to: 'set_1' },
        { from: 'set_1', to: 'condition_1' },
        { from: 'condition_1', to: 'task_1', branch: 'true' },
      ],
    },
  },
  {
    id: 'escalate-urgent',
    name: 'Escalate an urgent open task',
    description: 'When a task is raised to urgent and is not done, a message goes to the on-call chat webhook; anything else is skipped. Replace the URL.',
    category: 'Tasks',
    triggerType: 'entity',
    triggerConfig: { entity: 'task', events: ['updated'] },
    samplePayload: {
      entity: 'task',
      event: 'updated',
      entityId: '00000000-0000-4000-8000-000000000004',
      before: { id: '00000000-0000-4000-8000-000000000004', title: 'Fix checkout', status: 'in_progress', priority: 'high' },
      after: { id: '00000000-0000-4000-8000-000000000004', title: 'Fix checkout', status: 'in_progress', priority: 'urgent' },
      changedAt: '2026-01-05T09:00:00.000Z',
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Urgent?',
          position: col(0),
          params: { left: '{{trigger.after.priority}}', operator: 'equals', right: 'urgent' },
        },
        {
          id: 'condition_2',
          type: 'condition',
          name: 'Still open?',
          position: col(1),
          params: { left: '{{trigger.after.status}}', operator: 'not_equals', right: 'done' },
        },
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Page on-call',
          position: col(2),
          params: { method: 'POST', url: CHAT_URL, body: { text: 'Urgent and open: {{trigger.after.title}} (was {{trigger.before.priority}})' } },
        },
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'condition_2', branch: 'true' },
        { from: 'condition_2', to: 'http_1', branch: 'true' },
      ],
    },
  },
  {
    id: 'order-lines',
    name: 'Shop order → packing task',
    description:
      'A shop (Shopify, WooCommerce) posts an order; Code totals its lines and a packing task lists them. Orders without lines stop as failed, so you see them.',
    category: 'Payments & orders',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: {
      orderId: 'A-1001',
      customer: { name: 'Linus', email: 'linus@example.com' },
      lines: [
        { sku: 'MUG-1', title: 'Mug', qty: 2, price: 9.5 },
        { sku: 'TEE-M', title: 'T-shirt M', qty: 1, price: 19 },
        { sku: 'CAP-1', title: 'Cap', qty: 3, price: 12 },
        { sku: 'PIN-2', title: 'Pin', qty: 4, price: 1.25 },
      ],
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Has lines?',
          position: col(0),
          params: { left: '{{= $count(trigger.lines) }}', operator: 'greater_than', right: '0' },
        },
        {
          id: 'stop_1',
          type: 'stop',
          name: 'No lines',
          position: at(260, 280),
          params: { status: 'failed', message: 'Order {{trigger.orderId}} has no lines' },
        },
        {
          id: 'code_1',
          type: 'code',
          name: 'Total and list the lines',
          position: col(1),
          params: {
            code: [
              'const lines = trigger.lines;',
              'const total = lines.reduce((sum, l) => sum + l.qty * l.price, 0);',
              "return { total: total.toFixed(2), count: lines.length, list: lines.map((l) => l.qty + ' × ' + l.title + ' (' + l.sku + ')').join('\\n') };",
            ].join('\n'),
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Packing task',
          position: col(2),
          params: {
            title: 'Pack order {{trigger.orderId}} ({{nodes.code_1.count}} lines, {{nodes.code_1.total}})',
            notes: 'For {{trigger.customer.name}}:\n{{nodes.code_1.list}}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'code_1', branch: 'true' },
        { from: 'condition_1', to: 'stop_1', branch: 'false' },
        { from: 'code_1', to: 'task_1' },
      ],
    },
  },
  {
    id: 'failed-run-alert',
    name: 'Alert when a workflow fails',
    description:
      'An error workflow: name it as another workflow’s error workflow and each failed run of that one posts the failed step and error to a chat webhook. Replace the URL.',
    category: 'Notifications',
    triggerType: 'error',
    triggerConfig: {},
    samplePayload: {
      workflow: { id: '00000000-0000-4000-8000-000000000005' },
      run: {
        id: '00000000-0000-4000-8000-000000000006',
        eventId: 'evt_1',
        triggerType: 'webhook',
        startedAt: '2026-01-05T09:00:00.000Z',
        finishedAt: '2026-01-05T09:00:01.000Z',
      },
      failedNode: { id: 'http_1', type: 'http_request', error: 'POST https://api.example.com/orders answered HTTP 500' },
      error: 'node "http_1" failed: POST https://api.example.com/orders answered HTTP 500',
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Post the failure',
          position: col(0),
          params: { method: 'POST', url: CHAT_URL, body: { text: 'Run {{trigger.run.id}} failed at {{trigger.failedNode.id}}: {{trigger.error}}' } },
        },
      ],
      edges: [{ from: 'trigger', to: 'http_1' }],
    },
  },
  {
    id: 'order-line-tasks',
    name: 'Order webhook: one task per order line',
    description:
      'A shop posts an order; For each of its lines a picking task is created, then one shipping task lists them all (Aggregate). Point the shop’s order webhook at the workflow’s URL.',
    category: 'Payments & orders',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: {
      orderId: 'A-1002',
      customer: { name: 'Margaret', email: 'margaret@example.com' },
      lines: [
        { sku: 'MUG-1', title: 'Mug', qty: 2 },
        { sku: 'TEE-M', title: 'T-shirt M', qty: 1 },
        { sku: 'CAP-1', title: 'Cap', qty: 3 },
      ],
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        { id: 'loop_1', type: 'for_each', name: 'Each order line', position: col(0), params: { items: '{{trigger.lines}}', concurrency: '1' } },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Pick the line',
          position: at(260, 280),
          params: { title: 'Pick {{item.qty}} × {{item.title}} ({{item.sku}})', notes: 'Order {{trigger.orderId}}, line {{= index + 1 }}' },
        },
        {
          id: 'agg_1',
          type: 'aggregate',
          name: 'List the picks',
          position: col(1),
          params: { items: '{{nodes.loop_1.results}}', field: 'title', into: 'text', separator: '\n' },
        },
        {
          id: 'task_2',
          type: 'create_task',
          name: 'Ship the order',
          position: col(2),
          params: { title: 'Ship order {{trigger.orderId}} to {{trigger.customer.name}}', notes: '{{nodes.agg_1.text}}' },
        },
      ],
      edges: [
        { from: 'trigger', to: 'loop_1' },
        { from: 'loop_1', to: 'task_1', branch: 'each' },
        { from: 'loop_1', to: 'agg_1', branch: 'done' },
        { from: 'agg_1', to: 'task_2' },
      ],
    },
  },
  {
    id: 'expense-approval',
    name: 'Approval: wait for Approve or Reject',
    description:
      'An expense request waits (up to 3 days) for Approve or Reject on its run page, or a POST to its resume link. Approved: a task to pay it; rejected or no answer: a chat message. Replace the URL.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: {},
    samplePayload: { requester: { name: 'Ada Lovelace', email: 'ada@example.com' }, amount: 240, currency: 'EUR', reason: 'Conference ticket' },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        {
          id: 'wait_1',
          type: 'wait',
          name: 'Approve or reject',
          position: col(0),
          params: { mode: 'resume', timeoutAmount: '3', timeoutUnit: 'days' },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Pay the expense',
          position: at(-160, 280),
          params: {
            title: 'Pay {{trigger.amount}} {{trigger.currency}} to {{trigger.requester.name}}',
            notes: '{{trigger.reason}} (approved {{nodes.wait_1.resumedAt}})',
          },
        },
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Tell the requester',
          position: at(160, 280),
          params: {
            method: 'POST',
            url: CHAT_URL,
            body: {
              text: '{{trigger.requester.name}}: your expense of {{trigger.amount}} {{trigger.currency}} ({{trigger.reason}}) was not approved ({{= nodes.wait_1.resumedBy = "timeout" ? "no answer in 3 days" : "rejected" }}).',
            },
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'wait_1' },
        { from: 'wait_1', to: 'task_1', branch: 'resumed' },
        { from: 'wait_1', to: 'http_1', branch: 'rejected' },
        { from: 'wait_1', to: 'http_1', branch: 'timeout' },
      ],
    },
  },
  {
    id: 'follow-up-open-task',
    name: 'Follow up in 1 day if a task is still open',
    description:
      'A day after a task is created, it is looked up again (Find Tasks) and a Switch on its status posts a reminder to a chat webhook when it is still to do or in progress; done tasks are left alone. Replace the URL.',
    category: 'Tasks',
    triggerType: 'entity',
    triggerConfig: { entity: 'task', events: ['created'] },
    samplePayload: {
      entity: 'task',
      event: 'created',
      entityId: '00000000-0000-4000-8000-000000000007',
      before: null,
      after: {
        id: '00000000-0000-4000-8000-000000000007',
        title: 'Send the quote to BigCorp',
        status: 'todo',
        priority: 'medium',
        projectId: null,
        dueDate: null,
        notes: '',
        tags: [],
      },
      changedAt: '2026-01-05T09:00:00.000Z',
    },
    graph: {
      triggerPosition: at(0, 0),
      nodes: [
        { id: 'wait_1', type: 'wait', name: 'A day later', position: col(0), params: { mode: 'duration', amount: '1', unit: 'days' } },
        {
          id: 'find_1',
          type: 'find_tasks',
          name: 'Look the task up',
          position: col(1),
          params: { text: '{{trigger.after.title}}', limit: 25 },
        },
        {
          id: 'switch_1',
          type: 'switch',
          name: 'Its status now',
          position: col(2),
          params: {
            value: '{{= $string(nodes.find_1.items[id = $$.trigger.entityId][0].status) }}',
            rules: [
              { operator: 'equals', right: 'todo' },
              { operator: 'equals', right: 'in_progress' },
            ],
          },
        },
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Not started: remind',
          position: at(-160, 700),
          params: { method: 'POST', url: CHAT_URL, body: { text: 'Not started after a day: {{trigger.after.title}}' } },
        },
        {
          id: 'http_2',
          type: 'http_request',
          name: 'In progress: nudge',
          position: at(160, 700),
          params: { method: 'POST', url: CHAT_URL, body: { text: 'Still in progress after a day: {{trigger.after.title}}' } },
        },
      ],
      edges: [
        { from: 'trigger', to: 'wait_1' },
        { from: 'wait_1', to: 'find_1', branch: 'resumed' },
        { from: 'find_1', to: 'switch_1' },
        { from: 'switch_1', to: 'http_1', branch: '1' },
        { from: 'switch_1', to: 'http_2', branch: '2' },
      ],
    },
  },
];

/** The template with this id, or undefined. */
export const workflowTemplate = (id: string): WorkflowTemplate | undefined => WORKFLOW_TEMPLATES.find((t) => t.id === id);
