// The trigger registry (libs/contracts trigger-types.ts) and the engine: the payloads the engine's
// sources build match their type's payload schema and have the fields of the example the console
// shows; every trigger type has a source that starts its runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Check } from 'typebox/value';
import { TRIGGER_TYPES, TRIGGER_TYPE_NAMES, type EntityChanged } from '@flowdesk/contracts';
import { Scheduler, schedulePayload } from '../src/domain/scheduler.ts';
import { ChangeTriggers, entityPayload, notePayload } from '../src/domain/change-triggers.ts';

const now = new Date('2026-11-26T09:00:30.000Z');
const keys = (v: object) => Object.keys(v);

function change(entity: EntityChanged['entity'], action: EntityChanged['action'], after: Record<string, unknown>): EntityChanged {
  return {
    eventId: '00000000-0000-4000-8000-0000000000a1',
    ownerId: '00000000-0000-4000-8000-0000000000a2',
    entity,
    entityId: String(after.id),
    action,
    changedAt: now.toISOString(),
    before: action === 'created' ? null : { ...after, title: 'Before' },
    after,
    origin: null,
  };
}

test('the schedule payload the scheduler builds: its schema, the example’s fields', () => {
  const schedule = { cron: '*/5 * * * *', timezone: 'Europe/Berlin' };
  const payload = schedulePayload(new Date('2026-11-26T09:00:00.000Z'), now, schedule, 2);
  assert.ok(Check(TRIGGER_TYPES.schedule.payload, payload), JSON.stringify(payload));
  const example = TRIGGER_TYPES.schedule.example(schedule, now);
  assert.deepEqual(keys(payload), keys(example));
  assert.deepEqual({ cron: example.cron, timezone: example.timezone }, schedule);
});

test('the note and entity payloads the change triggers build: their schemas, the examples’ fields', () => {
  const note = notePayload(change('note', 'updated', { id: '00000000-0000-4000-8000-000000000001', title: 'Minutes', tags: [] }));
  assert.ok(Check(TRIGGER_TYPES.note.payload, note), JSON.stringify(note));
  assert.deepEqual(keys(note), keys(TRIGGER_TYPES.note.example({}, now)));
  for (const kind of ['task', 'project', 'calendar_entry'] as const) {
    const payload = entityPayload(change(kind, 'completed', { id: '00000000-0000-4000-8000-000000000004', title: 'Write report' }));
    assert.ok(Check(TRIGGER_TYPES.entity.payload, payload), JSON.stringify(payload));
    const example = TRIGGER_TYPES.entity.example({ entity: kind }, now);
    assert.deepEqual(keys(payload), keys(example), kind);
    assert.equal(example.entity, kind);
  }
});

test('every trigger type has a source: the engine’s (scheduler, change triggers), webhook-ingest’s or the runs API’s', () => {
  const engine = [new Scheduler({} as never), new ChangeTriggers({} as never)].flatMap((s) => s.types);
  // Webhook and form runs are published by webhook-ingest (a form's payload is tested against its schema
  // there: test/form-trigger.test.ts), manual ones by the runs API (POST /workflows/:id/runs), error ones
  // by the engine when another workflow's run failed (process-trigger.ts startErrorWorkflow).
  const covered = [...engine, 'webhook', 'manual', 'error', 'form'];
  assert.deepEqual([...covered].sort(), [...TRIGGER_TYPE_NAMES].sort());
  assert.equal(new Set(covered).size, covered.length, 'one source per type');
});
