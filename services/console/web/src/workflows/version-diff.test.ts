import type { WorkflowVersionDefinition } from '@flowdesk/contracts';
import { describe, expect, it } from 'vitest';
import { diffDefinitions, equal, settingLabel, showValue, valueChanges } from './version-diff.ts';

const base = (): WorkflowVersionDefinition => ({
  name: 'Lead to CRM',
  description: '',
  triggerType: 'webhook',
  triggerConfig: { responseMode: 'immediately' },
  requireWebhookSecret: true,
  executionOrder: 'parallel',
  errorWorkflowId: null,
  retention: null,
  graph: {
    nodes: [
      { id: 'task', type: 'create_task', position: { x: 240, y: 60 }, params: { title: 'Call {{trigger.body.name}}' } },
      {
        id: 'crm',
        type: 'http_request',
        name: 'Post to CRM',
        position: { x: 480, y: 60 },
        params: { method: 'POST', url: 'https://crm.example.com/leads', headers: { authorization: 'Bearer {{credentials.crm}}' } },
      },
    ],
    edges: [
      { from: 'trigger', to: 'task' },
      { from: 'task', to: 'crm' },
    ],
  },
});

describe('diffDefinitions', () => {
  it('says nothing changed for the same definition, whatever the key order', () => {
    const a = base();
    const b = JSON.parse(JSON.stringify(a)) as WorkflowVersionDefinition;
    // jsonb answers keys in its own order
    b.graph.nodes[1] = { params: b.graph.nodes[1]!.params, type: 'http_request', position: { y: 60, x: 480 }, name: 'Post to CRM', id: 'crm' } as never;
    const d = diffDefinitions(a, b);
    expect(d.same).toBe(true);
    expect(d.sameApartFromLayout).toBe(true);
    expect(d.steps).toEqual({ added: [], removed: [], changed: [], moved: [] });
  });

  it('lists steps added and removed, and the edges that came and went with them', () => {
    const older = base();
    const newer = base();
    newer.graph.nodes = [newer.graph.nodes[0]!, { id: 'note', type: 'create_note', params: { title: 'Lead', content: '{{trigger.body.name}}' } } as never];
    newer.graph.edges = [
      { from: 'trigger', to: 'task' },
      { from: 'task', to: 'note' },
    ];
    const d = diffDefinitions(older, newer);
    expect(d.steps.added.map((n) => n.id)).toEqual(['note']);
    expect(d.steps.removed.map((n) => n.id)).toEqual(['crm']);
    expect(d.steps.changed).toEqual([]);
    expect(d.edges.added).toEqual([{ from: 'task', to: 'note' }]);
    expect(d.edges.removed).toEqual([{ from: 'task', to: 'crm' }]);
    expect(d.same).toBe(false);
  });

  it('names each changed parameter of a changed step, nested ones by their path, with before and after', () => {
    const older = base();
    const newer = base();
    const crm = newer.graph.nodes[1] as Extract<WorkflowVersionDefinition['graph']['nodes'][number], { type: 'http_request' }>;
    crm.params = { ...crm.params, url: 'https://crm.example.com/v2/leads', headers: { authorization: 'Bearer {{credentials.crm}}', 'x-source': 'flowdesk' } };
    crm.onError = 'continue';
    const d = diffDefinitions(older, newer);
    expect(d.steps.changed).toEqual([
      {
        id: 'crm',
        type: 'http_request',
        name: 'Post to CRM',
        changes: [
          { path: 'onError', before: undefined, after: 'continue' },
          { path: 'params.headers.x-source', before: undefined, after: 'flowdesk' },
          { path: 'params.url', before: 'https://crm.example.com/leads', after: 'https://crm.example.com/v2/leads' },
        ],
      },
    ]);
    expect(d.steps.added).toEqual([]);
    expect(d.edges).toEqual({ added: [], removed: [] });
  });

  it('a step only dragged elsewhere is moved, not changed', () => {
    const newer = base();
    newer.graph.nodes[0]!.position = { x: 300, y: 200 };
    newer.graph.triggerPosition = { x: 0, y: 0 };
    const d = diffDefinitions(base(), newer);
    expect(d.steps.changed).toEqual([]);
    expect(d.steps.moved).toEqual(['trigger', 'task']);
    expect(d.sameApartFromLayout).toBe(true);
    expect(d.same).toBe(false);
  });

  it('a branch on an edge is part of it: true → false is one edge removed and one added', () => {
    const older = base();
    older.graph.edges[1] = { from: 'task', to: 'crm', branch: 'error' };
    const d = diffDefinitions(older, base());
    expect(d.edges.removed).toEqual([{ from: 'task', to: 'crm', branch: 'error' }]);
    expect(d.edges.added).toEqual([{ from: 'task', to: 'crm' }]);
  });

  it('lists the settings changed, trigger settings and retention by their key, in the page’s order', () => {
    const newer = base();
    newer.name = 'Lead to CRM v2';
    newer.triggerConfig = { responseMode: 'lastNode', rateLimitPerSecond: 5 };
    newer.retention = { days: 7 };
    newer.executionOrder = 'ordered';
    const d = diffDefinitions(base(), newer);
    expect(d.settings).toEqual([
      { path: 'name', before: 'Lead to CRM', after: 'Lead to CRM v2' },
      { path: 'triggerConfig.rateLimitPerSecond', before: undefined, after: 5 },
      { path: 'triggerConfig.responseMode', before: 'immediately', after: 'lastNode' },
      { path: 'executionOrder', before: 'parallel', after: 'ordered' },
      { path: 'retention', before: null, after: { days: 7 } },
    ]);
    expect(d.steps.changed).toEqual([]);
  });
});

describe('helpers', () => {
  it('valueChanges walks arrays by index and reports a change of kind at its own path', () => {
    expect(valueChanges({ rules: [{ v: 1 }, { v: 2 }] }, { rules: [{ v: 1 }, { v: 3 }, { v: 4 }] })).toEqual([
      { path: 'rules[1].v', before: 2, after: 3 },
      { path: 'rules[2]', before: undefined, after: { v: 4 } },
    ]);
    expect(valueChanges({ body: 'text' }, { body: { a: 1 } })).toEqual([{ path: 'body', before: 'text', after: { a: 1 } }]);
    expect(equal({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(equal([1, 2], [1, 2, 3])).toBe(false);
  });

  it('labels and values as the page shows them', () => {
    expect(settingLabel('triggerConfig.cron')).toBe('Trigger settings › cron');
    expect(settingLabel('retention.days')).toBe('Run history retention › days');
    expect(settingLabel('name')).toBe('Name');
    expect(showValue(undefined)).toBe('not set');
    expect(showValue('a')).toBe('"a"');
    expect(showValue({ days: 7 })).toBe('{"days":7}');
    expect(showValue('x'.repeat(300), 10)).toBe(`"${'x'.repeat(8)}…`);
  });
});
