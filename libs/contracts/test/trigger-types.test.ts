// The trigger registry: each trigger type defined once, with its settings and payload schemas and an
// example payload; every schema that names a trigger type takes it from there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Check } from 'typebox/value';
import {
  CreateWorkflow,
  ListWorkflowsQuery,
  TRIGGER_TYPES,
  TRIGGER_TYPE_NAMES,
  TriggerEvent,
  TriggerType,
  Workflow,
  WorkflowDefinition,
  WorkflowRun,
  triggerConfigProblem,
} from '../src/index.ts';

test('every trigger type has one definition: label, description, settings and payload schemas, an example', () => {
  assert.deepEqual(Object.keys(TRIGGER_TYPES), [...TRIGGER_TYPE_NAMES]);
  for (const name of TRIGGER_TYPE_NAMES) {
    const t = TRIGGER_TYPES[name];
    assert.equal(t.type, name);
    assert.ok(t.label && t.description.length > 10, name);
    assert.ok(t.config && t.payload, name);
  }
  assert.deepEqual(
    TRIGGER_TYPE_NAMES.map((n) => TRIGGER_TYPES[n].label),
    ['Webhook', 'Manual', 'Schedule', 'Note', 'Entity change', 'Error', 'Form'],
  );
});

test('each example payload matches its type’s payload schema, for the settings it is shown with', () => {
  const now = new Date('2026-11-26T09:00:00.000Z');
  const cases: [keyof typeof TRIGGER_TYPES, Record<string, unknown>][] = [
    ['webhook', {}],
    ['manual', {}],
    ['schedule', {}],
    ['schedule', { cron: '*/5 * * * *', timezone: 'Europe/Berlin' }],
    ['note', {}],
    ['entity', {}],
    ['entity', { entity: 'task' }],
    ['entity', { entity: 'project' }],
    ['entity', { entity: 'calendar_entry' }],
    ['form', {}],
    [
      'form',
      {
        title: 'Contact',
        fields: [
          { name: 'seats', label: 'Seats', type: 'number' },
          { name: 'topic', label: 'Topic', type: 'select', options: ['Demo'] },
        ],
      },
    ],
  ];
  for (const [type, config] of cases) {
    const example = TRIGGER_TYPES[type].example(config, now);
    assert.ok(Check(TRIGGER_TYPES[type].payload, example), `${type} ${JSON.stringify(config)}: ${JSON.stringify(example)}`);
  }
  assert.equal(TRIGGER_TYPES.entity.example({ entity: 'project' }, now).entity, 'project');
  assert.equal(TRIGGER_TYPES.schedule.example({ cron: '0 8 * * 1' }, now).cron, '0 8 * * 1');
  // A form's example has its fields, by key and type, and submittedAt.
  assert.deepEqual(
    TRIGGER_TYPES.form.example(
      {
        fields: [
          { name: 'seats', label: 'Seats', type: 'number' },
          { name: 'topic', label: 'Topic', type: 'select', options: ['Demo'] },
        ],
      },
      now,
    ),
    {
      seats: 3,
      topic: 'Demo',
      submittedAt: now.toISOString(),
    },
  );
});

test('the settings schemas are what workspace-api checks on save', () => {
  for (const [type, good, bad] of [
    ['note', { events: ['created'] }, { events: [] }],
    ['entity', { entity: 'task' }, { entity: 'note' }],
    ['form', { title: 'Contact', fields: [{ name: 'email', label: 'Email', type: 'email', required: true }] }, { title: 'Contact', fields: [] }],
  ] as const) {
    assert.ok(Check(TRIGGER_TYPES[type].config, good));
    assert.equal(triggerConfigProblem(type, good), null);
    assert.equal(Check(TRIGGER_TYPES[type].config, bad), false);
    assert.notEqual(triggerConfigProblem(type, bad), null);
  }
});

test('every schema that names a trigger type takes the registry’s', () => {
  for (const schema of [
    Workflow.properties.triggerType,
    CreateWorkflow.properties.triggerType,
    ListWorkflowsQuery.properties.triggerType,
    WorkflowRun.properties.triggerType,
    TriggerEvent.properties.source,
    WorkflowDefinition.properties.triggerType,
  ]) {
    for (const name of TRIGGER_TYPE_NAMES) assert.ok(Check(schema, name), name);
    assert.equal(Check(schema, 'email'), false);
  }
  assert.equal(Workflow.properties.triggerType, TriggerType);
  assert.equal(WorkflowRun.properties.triggerType, TriggerType);
  assert.equal(TriggerEvent.properties.source, TriggerType);
});
