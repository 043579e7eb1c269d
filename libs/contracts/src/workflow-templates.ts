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
  /**
   * A provider webhook's delivery headers besides its signature (`x-github-event`, `x-shopify-topic`…),
   * lower-cased, as the provider documents them: what `{{trigger.headers.…}}` reads in the sample.
   */
  sampleHeaders?: Record<string, string>;
  /**
   * The provider whose signature the graph checks first (its Verify signature preset) and the
   * credential holding its secret: the workflow needs no x-webhook-secret (docs/webhooks.md,
   * "Provider signatures without x-webhook-secret"); the person adds the credential before activating.
   */
  signature?: { preset: 'github' | 'stripe' | 'shopify' | 'standard_webhooks'; credential: string };
  /**
   * The credentials its steps name (Slack's, Send Email's…), by name and type: the person creates them
   * under Settings → Credentials before activating (the step form's picker offers them once they exist).
   */
  credentials?: readonly { name: string; type: string }[];
  /** Node types the template shows off (for the gallery's card). */
  uses?: readonly string[];
}

// No positions: the editor lays a template out (left to right, services/console/web/src/workflows/layout.ts) on open.

/**
 * The first steps of a provider webhook template: Verify signature with the provider's preset and
 * secret; a genuine delivery is answered 200 at once and goes on (`then`), a forged one is answered
 * 401 with the reason and the run stops as failed. With these first, the trigger needs no
 * x-webhook-secret (signatureGated) and the template answers from its Respond nodes.
 */
function signatureGate(preset: NonNullable<WorkflowTemplate['signature']>['preset'], credential: string, then: string) {
  return {
    nodes: [
      { id: 'verify_1', type: 'verify_signature', name: 'Genuine delivery?', params: { preset, credential } },
      { id: 'respond_ok', type: 'respond', name: 'Received', params: { status: 200, body: { received: true } } },
      {
        id: 'respond_refused',
        type: 'respond',
        name: 'Refuse the forged one',

        params: { status: 401, body: { error: 'invalid_signature', reason: '{{nodes.verify_1.reason}}' } },
      },
      {
        id: 'stop_refused',
        type: 'stop',
        name: 'Refused',

        params: { status: 'failed', message: 'Signature refused: {{nodes.verify_1.message}}' },
      },
    ] satisfies WorkflowGraph['nodes'],
    edges: [
      { from: 'trigger', to: 'verify_1' },
      { from: 'verify_1', to: 'respond_ok', branch: 'true' },
      { from: 'verify_1', to: 'respond_refused', branch: 'false' },
      { from: 'respond_refused', to: 'stop_refused' },
      { from: 'respond_ok', to: then },
    ] satisfies WorkflowGraph['edges'],
  };
}

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
      nodes: [
        {
          id: 'set_1',
          type: 'set_fields',
          name: 'Tidy the fields',

          params: {
            fields: [
              { name: 'name', value: '{{= $trim(trigger.name) }}' },
              { name: 'email', value: '{{= $lowercase($trim(trigger.email)) }}' },
              { name: 'due', value: '{{= $dateFormat($dateAdd(now, 2, "days"), "yyyy-MM-dd") }}' },
            ],
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Follow up',

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
    id: 'contact-form-task',
    name: 'Contact form → task',
    description:
      'Flowdesk hosts a contact form (name, email, topic, message) at the workflow’s form URL; each submission becomes a task to answer it. Change the fields in the trigger, switch the workflow on and share the link.',
    category: 'Forms & webhooks',
    triggerType: 'form',
    triggerConfig: {
      title: 'Contact us',
      description: 'We answer within one working day.',
      fields: [
        { name: 'name', label: 'Name', type: 'text', required: true },
        { name: 'email', label: 'Email', type: 'email', required: true },
        { name: 'topic', label: 'Topic', type: 'select', required: true, options: ['Question', 'Quote', 'Support'] },
        { name: 'message', label: 'Message', type: 'textarea', required: true },
      ],
      thankYou: 'Thanks! We will get back to you within one working day.',
    },
    samplePayload: {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      topic: 'Quote',
      message: 'Please call me back about the quote.',
      submittedAt: '2026-12-04T09:00:00.000Z',
    },
    graph: {
      nodes: [
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Answer the contact',

          params: {
            title: 'Answer {{trigger.name}} ({{trigger.topic}})',
            dueDate: '{{= $dateFormat($dateAdd(now, 1, "days"), "yyyy-MM-dd") }}',
            notes: '{{trigger.email}}, {{trigger.submittedAt}}\n\n{{trigger.message}}',
          },
        },
      ],
      edges: [{ from: 'trigger', to: 'task_1' }],
    },
  },
  {
    id: 'github-issue-to-task',
    name: 'GitHub issue → task',
    description:
      'A GitHub webhook (issues events) creates a task for each newly opened issue; other events and actions end without one. Checks GitHub’s X-Hub-Signature-256 with the credential github_webhook_secret (the Secret you enter in the repository’s Settings → Webhooks, content type application/json); no x-webhook-secret is needed.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: { responseMode: 'respond_node' },
    signature: { preset: 'github', credential: 'github_webhook_secret' },
    // GitHub's "issues" event (docs.github.com, webhook events and payloads): the fields read below.
    sampleHeaders: { 'x-github-event': 'issues', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'user-agent': 'GitHub-Hookshot/044aadd' },
    samplePayload: {
      action: 'opened',
      issue: {
        number: 42,
        title: 'Login button does nothing',
        state: 'open',
        html_url: 'https://github.com/acme/app/issues/42',
        body: 'Clicking "Log in" on Safari shows nothing.',
        user: { login: 'octocat', id: 1 },
        labels: [],
      },
      repository: { id: 1296269, name: 'app', full_name: 'acme/app', html_url: 'https://github.com/acme/app' },
      sender: { login: 'octocat', id: 1 },
    },
    graph: {
      nodes: [
        ...signatureGate('github', 'github_webhook_secret', 'condition_1').nodes,
        {
          id: 'condition_1',
          type: 'condition',
          name: 'A newly opened issue?',

          params: {
            rules: [
              { left: '{{trigger.headers.x-github-event}}', operator: 'equals', right: 'issues' },
              { left: '{{trigger.action}}', operator: 'equals', right: 'opened' },
            ],
            combinator: 'and',
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Task for the issue',

          params: {
            title: '{{trigger.repository.full_name}}#{{trigger.issue.number}}: {{trigger.issue.title}}',
            notes: 'Opened by {{trigger.issue.user.login}}: {{trigger.issue.html_url}}',
          },
        },
      ],
      edges: [...signatureGate('github', 'github_webhook_secret', 'condition_1').edges, { from: 'condition_1', to: 'task_1', branch: 'true' }],
    },
  },
  {
    id: 'stripe-payment',
    name: 'Stripe payment → task',
    description:
      'A Stripe webhook routes on the event type: a failed payment becomes a task to chase it, a succeeded one a bookkeeping task with the amount; other events end without one. Checks the Stripe-Signature with the credential stripe_webhook_secret (the endpoint’s whsec_… signing secret); no x-webhook-secret is needed.',
    category: 'Payments & orders',
    triggerType: 'webhook',
    triggerConfig: { responseMode: 'respond_node' },
    signature: { preset: 'stripe', credential: 'stripe_webhook_secret' },
    // A Stripe Event object (docs.stripe.com/api/events/object) whose data.object is a PaymentIntent.
    samplePayload: {
      id: 'evt_3MtwBwLkdIwHu7ix28a3tqPa',
      object: 'event',
      api_version: '2024-06-20',
      created: 1680064028,
      type: 'payment_intent.succeeded',
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: {
        object: {
          id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
          object: 'payment_intent',
          amount: 4950,
          amount_received: 4950,
          currency: 'eur',
          status: 'succeeded',
          receipt_email: 'buyer@example.com',
          last_payment_error: null,
        },
      },
    },
    graph: {
      nodes: [
        ...signatureGate('stripe', 'stripe_webhook_secret', 'switch_1').nodes,
        {
          id: 'switch_1',
          type: 'switch',
          name: 'Event type',

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

          params: {
            title: 'Book payment {{= $formatNumber(trigger.data.object.amount / 100, "0.00") }} {{= $uppercase(trigger.data.object.currency) }}',
            notes: 'From {{trigger.data.object.receipt_email}} ({{trigger.data.object.id}})',
          },
        },
        {
          id: 'task_2',
          type: 'create_task',
          name: 'Chase the failed payment',

          params: {
            title: 'Payment failed: {{trigger.data.object.receipt_email}}',
            notes: 'Stripe payment {{trigger.data.object.id}}: {{= trigger.data.object.last_payment_error.message }}',
          },
        },
      ],
      edges: [
        ...signatureGate('stripe', 'stripe_webhook_secret', 'switch_1').edges,
        { from: 'switch_1', to: 'task_1', branch: '1' },
        { from: 'switch_1', to: 'task_2', branch: '2' },
      ],
    },
  },
  {
    id: 'signed-event-to-task',
    name: 'Standard Webhooks event → task',
    description:
      'A sender that signs per Standard Webhooks (Svix, Clerk, Resend, OpenAI…) posts an event; a task records its type and subject. Checks webhook-id, webhook-timestamp and webhook-signature with the credential standard_webhook_secret (the sender’s whsec_… secret); no x-webhook-secret is needed.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: { responseMode: 'respond_node' },
    signature: { preset: 'standard_webhooks', credential: 'standard_webhook_secret' },
    // The payload shape the Standard Webhooks spec recommends (standardwebhooks.com): type, timestamp, data.
    samplePayload: {
      type: 'contact.created',
      timestamp: '2026-01-05T08:00:00.000Z',
      data: { id: 'contact_2Ysc1', email: 'ada@example.com', name: 'Ada Lovelace' },
    },
    graph: {
      nodes: [
        ...signatureGate('standard_webhooks', 'standard_webhook_secret', 'task_1').nodes,
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Task for the event',

          params: { title: '{{trigger.type}}: {{trigger.data.email}}', notes: 'Event at {{trigger.timestamp}} (delivery {{trigger.headers.webhook-id}})' },
        },
      ],
      edges: signatureGate('standard_webhooks', 'standard_webhook_secret', 'task_1').edges,
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
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Read open items',

          params: { method: 'GET', url: 'https://api.example.com/items?status=open' },
        },
        {
          id: 'filter_1',
          type: 'filter',
          name: 'Overdue only',

          params: {
            items: '{{nodes.http_1.body.items}}',
            rules: [{ field: 'due', operator: 'less_than', right: '{{trigger.scheduledFor}}' }],
            combinator: 'and',
          },
        },
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Any overdue?',

          params: { rules: [{ left: '{{nodes.filter_1.count}}', operator: 'greater_than', right: '0' }], combinator: 'and' },
        },
        {
          id: 'http_2',
          type: 'http_request',
          name: 'Post the digest',

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
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Post to chat',

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
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Enrich the email',

          params: { method: 'GET', url: 'https://api.example.com/enrich?email={{trigger.email}}', headers: { accept: 'application/json' } },
        },
        {
          id: 'set_1',
          type: 'set_fields',
          name: 'Keep the useful fields',

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

          params: { rules: [{ left: '{{nodes.set_1.employees}}', operator: 'greater_than', right: '49' }], combinator: 'and' },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Call the lead',

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
      nodes: [
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Urgent and still open?',

          params: {
            rules: [
              { left: '{{trigger.after.priority}}', operator: 'equals', right: 'urgent' },
              { left: '{{trigger.after.status}}', operator: 'not_equals', right: 'done' },
            ],
            combinator: 'and',
          },
        },
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Page on-call',

          params: { method: 'POST', url: CHAT_URL, body: { text: 'Urgent and open: {{trigger.after.title}} (was {{trigger.before.priority}})' } },
        },
      ],
      edges: [
        { from: 'trigger', to: 'condition_1' },
        { from: 'condition_1', to: 'http_1', branch: 'true' },
      ],
    },
  },
  {
    id: 'order-lines',
    name: 'Shopify order → packing task',
    description:
      'A Shopify orders/create webhook posts an order; Code totals its line items and a packing task lists them. Orders without lines stop as failed, so you see them. Checks X-Shopify-Hmac-Sha256 with the credential shopify_webhook_secret (the app’s client secret, or the key Settings → Notifications → Webhooks shows); no x-webhook-secret is needed.',
    category: 'Payments & orders',
    triggerType: 'webhook',
    triggerConfig: { responseMode: 'respond_node' },
    signature: { preset: 'shopify', credential: 'shopify_webhook_secret' },
    // Shopify's Order resource as the orders/create topic sends it (shopify.dev, Order webhooks): prices are strings.
    sampleHeaders: {
      'x-shopify-topic': 'orders/create',
      'x-shopify-shop-domain': 'acme-shop.myshopify.com',
      'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'x-shopify-api-version': '2026-01',
    },
    samplePayload: {
      id: 5940139491234,
      admin_graphql_api_id: 'gid://shopify/Order/5940139491234',
      name: '#1001',
      order_number: 1001,
      email: 'linus@example.com',
      created_at: '2026-01-05T08:00:00-05:00',
      currency: 'EUR',
      total_price: '79.00',
      financial_status: 'paid',
      fulfillment_status: null,
      customer: { id: 207119551, email: 'linus@example.com', first_name: 'Linus', last_name: 'Torvalds' },
      line_items: [
        { id: 466157049, sku: 'MUG-1', title: 'Mug', quantity: 2, price: '9.50' },
        { id: 518995019, sku: 'TEE-M', title: 'T-shirt M', quantity: 1, price: '19.00' },
        { id: 703073504, sku: 'CAP-1', title: 'Cap', quantity: 3, price: '12.00' },
        { id: 1071823172, sku: 'PIN-2', title: 'Pin', quantity: 4, price: '1.25' },
      ],
    },
    graph: {
      nodes: [
        ...signatureGate('shopify', 'shopify_webhook_secret', 'condition_1').nodes,
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Has lines?',

          params: { rules: [{ left: '{{= $count(trigger.line_items) }}', operator: 'greater_than', right: '0' }], combinator: 'and' },
        },
        {
          id: 'stop_1',
          type: 'stop',
          name: 'No lines',

          params: { status: 'failed', message: 'Order {{trigger.name}} has no lines' },
        },
        {
          id: 'code_1',
          type: 'code',
          name: 'Total and list the lines',

          params: {
            code: [
              'const lines = trigger.line_items;',
              'const total = lines.reduce((sum, l) => sum + l.quantity * Number(l.price), 0);',
              "return { total: total.toFixed(2), count: lines.length, list: lines.map((l) => l.quantity + ' × ' + l.title + ' (' + l.sku + ')').join('\\n') };",
            ].join('\n'),
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Packing task',

          params: {
            title: 'Pack order {{trigger.name}} ({{nodes.code_1.count}} lines, {{nodes.code_1.total}} {{trigger.currency}})',
            notes: 'For {{trigger.customer.first_name}} {{trigger.customer.last_name}}:\n{{nodes.code_1.list}}',
          },
        },
      ],
      edges: [
        ...signatureGate('shopify', 'shopify_webhook_secret', 'condition_1').edges,
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
      nodes: [
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Post the failure',

          params: { method: 'POST', url: CHAT_URL, body: { text: 'Run {{trigger.run.id}} failed at {{trigger.failedNode.id}}: {{trigger.error}}' } },
        },
      ],
      edges: [{ from: 'trigger', to: 'http_1' }],
    },
  },
  {
    id: 'failed-run-slack',
    name: 'Post failed runs to Slack',
    description:
      'An error workflow: name it as other workflows’ error workflow and each of their failed runs is posted to a Slack channel (the failed step and its error). Create a Slack bot token credential named slack_bot (the app needs chat:write and must be in the channel) and set the channel.',
    category: 'Notifications',
    triggerType: 'error',
    triggerConfig: {},
    credentials: [{ name: 'slack_bot', type: 'slack_bot' }],
    uses: ['slack'],
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
      nodes: [
        {
          id: 'slack_1',
          type: 'slack',
          name: 'Tell the channel',
          params: {
            mode: 'bot',
            credential: 'slack_bot',
            channel: '#alerts',
            text: ':rotating_light: Run {{trigger.run.id}} of workflow {{trigger.workflow.id}} failed at step {{trigger.failedNode.id}} ({{trigger.failedNode.type}}): {{trigger.error}}',
          },
        },
      ],
      edges: [{ from: 'trigger', to: 'slack_1' }],
    },
  },
  {
    id: 'weekly-overdue-email',
    name: 'Weekly overdue tasks by email',
    description:
      'Every Monday at 08:00 finds your overdue tasks (Find Tasks) and mails you the list; no mail when none is overdue. Create an SMTP server credential named smtp and set the address.',
    category: 'Tasks',
    triggerType: 'schedule',
    triggerConfig: { cron: '0 8 * * 1', timezone: 'UTC' },
    credentials: [{ name: 'smtp', type: 'smtp' }],
    uses: ['find_tasks', 'condition', 'send_email'],
    samplePayload: { scheduledFor: '2026-01-05T08:00:00.000Z', firedAt: '2026-01-05T08:00:01.000Z', cron: '0 8 * * 1', timezone: 'UTC', missedTicks: 0 },
    graph: {
      nodes: [
        { id: 'find_1', type: 'find_tasks', name: 'Overdue tasks', params: { overdue: true, limit: 100 } },
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Any overdue?',
          params: { rules: [{ left: '{{nodes.find_1.count}}', operator: 'greater_than', right: '0' }], combinator: 'and' },
        },
        {
          id: 'email_1',
          type: 'send_email',
          name: 'Mail the list',
          params: {
            credential: 'smtp',
            to: 'you@example.com',
            subject: '{{nodes.find_1.count}} overdue tasks this week',
            text: 'Overdue on {{= $substring(trigger.scheduledFor, 0, 10) }}:\n\n{{= $join([nodes.find_1.items.("- " & title & " (due " & dueDate & ")")], "\\n") }}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'find_1' },
        { from: 'find_1', to: 'condition_1' },
        { from: 'condition_1', to: 'email_1', branch: 'true' },
      ],
    },
  },
  {
    id: 'ai-triage-request',
    name: 'Triage a request with AI → task with priority',
    description:
      'A form or a mail forwarder posts a request; the AI step reads it and answers a title, a priority and a summary (JSON checked against a schema), and a task is created with them. Create an OpenAI-compatible model API credential named openai (OpenAI, or a local Ollama) and set the model.',
    category: 'Forms & webhooks',
    triggerType: 'webhook',
    triggerConfig: {},
    credentials: [{ name: 'openai', type: 'openai_compatible' }],
    uses: ['ai', 'create_task'],
    samplePayload: {
      from: 'ada@example.com',
      subject: 'Checkout is down',
      message: 'Since this morning none of our customers can pay: the checkout page shows an error after the card details.',
    },
    graph: {
      nodes: [
        {
          id: 'ai_1',
          type: 'ai',
          name: 'Triage',
          params: {
            credential: 'openai',
            model: 'gpt-4o-mini',
            system:
              'You triage inbound requests for a small team. Give the task a short imperative title, a priority (urgent: customers or money are affected now; high: this week; medium; low) and a two-sentence summary.',
            prompt: 'From: {{trigger.from}}\nSubject: {{trigger.subject}}\n\n{{trigger.message}}',
            temperature: 0,
            outputSchema: JSON.stringify({
              type: 'object',
              properties: {
                title: { type: 'string', maxLength: 200 },
                priority: { type: 'string', enum: ['low', 'medium', 'high', 'urgent'] },
                summary: { type: 'string' },
              },
              required: ['title', 'priority', 'summary'],
              additionalProperties: false,
            }),
          },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Task with its priority',
          params: {
            title: '{{nodes.ai_1.json.title}}',
            priority: '{{nodes.ai_1.json.priority}}',
            notes: '{{nodes.ai_1.json.summary}}\n\nFrom {{trigger.from}}: {{trigger.subject}}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'ai_1' },
        { from: 'ai_1', to: 'task_1' },
      ],
    },
  },
  {
    id: 'weekly-ai-overdue-summary',
    name: 'Weekly AI summary of overdue tasks by email',
    description:
      'Every Monday at 08:00 finds your overdue tasks, has the AI step write a short summary of what to tackle first, and mails it to you; no mail when none is overdue. Create an OpenAI-compatible model API credential named openai and an SMTP server credential named smtp, and set the address.',
    category: 'Tasks',
    triggerType: 'schedule',
    triggerConfig: { cron: '0 8 * * 1', timezone: 'UTC' },
    credentials: [
      { name: 'openai', type: 'openai_compatible' },
      { name: 'smtp', type: 'smtp' },
    ],
    uses: ['find_tasks', 'ai', 'send_email'],
    samplePayload: { scheduledFor: '2026-01-05T08:00:00.000Z', firedAt: '2026-01-05T08:00:01.000Z', cron: '0 8 * * 1', timezone: 'UTC', missedTicks: 0 },
    graph: {
      nodes: [
        { id: 'find_1', type: 'find_tasks', name: 'Overdue tasks', params: { overdue: true, limit: 100 } },
        {
          id: 'condition_1',
          type: 'condition',
          name: 'Any overdue?',
          params: { rules: [{ left: '{{nodes.find_1.count}}', operator: 'greater_than', right: '0' }], combinator: 'and' },
        },
        {
          id: 'ai_1',
          type: 'ai',
          name: 'Summarise',
          params: {
            credential: 'openai',
            model: 'gpt-4o-mini',
            system: 'You write a short, friendly weekly note (at most 120 words, plain text) on overdue tasks: which to tackle first and why.',
            prompt:
              'Today is {{= $substring(trigger.scheduledFor, 0, 10) }}. My overdue tasks:\n{{= $join([nodes.find_1.items.("- " & title & " (due " & dueDate & ")")], "\\n") }}',
          },
        },
        {
          id: 'email_1',
          type: 'send_email',
          name: 'Mail the summary',
          params: {
            credential: 'smtp',
            to: 'you@example.com',
            subject: '{{nodes.find_1.count}} overdue tasks this week',
            text: '{{nodes.ai_1.text}}',
          },
        },
      ],
      edges: [
        { from: 'trigger', to: 'find_1' },
        { from: 'find_1', to: 'condition_1' },
        { from: 'condition_1', to: 'ai_1', branch: 'true' },
        { from: 'ai_1', to: 'email_1' },
      ],
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
      nodes: [
        { id: 'loop_1', type: 'for_each', name: 'Each order line', params: { items: '{{trigger.lines}}', concurrency: '1' } },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Pick the line',

          params: { title: 'Pick {{item.qty}} × {{item.title}} ({{item.sku}})', notes: 'Order {{trigger.orderId}}, line {{= index + 1 }}' },
        },
        {
          id: 'agg_1',
          type: 'aggregate',
          name: 'List the picks',

          params: { items: '{{nodes.loop_1.results}}', field: 'title', into: 'text', separator: '\n' },
        },
        {
          id: 'task_2',
          type: 'create_task',
          name: 'Ship the order',

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
      nodes: [
        {
          id: 'wait_1',
          type: 'wait',
          name: 'Approve or reject',

          params: { mode: 'resume', timeoutAmount: '3', timeoutUnit: 'days' },
        },
        {
          id: 'task_1',
          type: 'create_task',
          name: 'Pay the expense',

          params: {
            title: 'Pay {{trigger.amount}} {{trigger.currency}} to {{trigger.requester.name}}',
            notes: '{{trigger.reason}} (approved {{nodes.wait_1.resumedAt}})',
          },
        },
        {
          id: 'http_1',
          type: 'http_request',
          name: 'Tell the requester',

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
      nodes: [
        { id: 'wait_1', type: 'wait', name: 'A day later', params: { mode: 'duration', amount: '1', unit: 'days' } },
        {
          id: 'find_1',
          type: 'find_tasks',
          name: 'Look the task up',

          params: { text: '{{trigger.after.title}}', limit: 25 },
        },
        {
          id: 'switch_1',
          type: 'switch',
          name: 'Its status now',

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

          params: { method: 'POST', url: CHAT_URL, body: { text: 'Not started after a day: {{trigger.after.title}}' } },
        },
        {
          id: 'http_2',
          type: 'http_request',
          name: 'In progress: nudge',

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
