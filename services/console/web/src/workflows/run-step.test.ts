import { describe, expect, it } from 'vitest';
import { NODE_TYPES } from '@flowdesk/contracts/nodes';
import { emptyForm, toParams } from './graph.ts';
import { sideEffectOf } from './run-step.tsx';

describe('Run this step: which steps ask before acting', () => {
  const effect = (kind: Parameters<typeof emptyForm>[0], form: Record<string, string> = {}) => {
    const data = emptyForm(kind);
    data.form = { ...data.form, ...form };
    return sideEffectOf(data, toParams(data).params);
  };
  it('computing steps run at once; a GET is safe, any other method and Create Task ask', () => {
    for (const kind of ['condition', 'set_fields', 'switch', 'filter', 'stop', 'code'] as const) expect(effect(kind)).toBeNull();
    expect(effect('http_request', { method: 'GET' })).toBeNull();
    expect(effect('http_request', { method: 'POST' })).toBe('It sends the POST request for real.');
    expect(effect('http_request', { method: 'DELETE' })).toBe('It sends the DELETE request for real.');
    expect(effect('create_task')).toMatch(/creates the task/);
  });
  it('the registry says which steps only compute: those run at once, every action asks', () => {
    for (const d of NODE_TYPES.filter((x) => !x.action)) expect(effect(d.type), d.type).toBeNull();
    // Wait and Respond change nothing outside the run (the engine's isAction is false): they do not ask.
    expect(effect('wait')).toBeNull();
    expect(effect('respond')).toBeNull();
    for (const d of NODE_TYPES.filter((x) => x.action && x.type !== 'http_request' && x.type !== 'create_task'))
      expect(effect(d.type), d.type).toMatch(/runs for real/);
    // The workspace writes ask.
    for (const t of ['update_task', 'create_note', 'create_calendar_entry', 'add_comment', 'run_workflow'] as const) expect(effect(t)).toMatch(/runs for real/);
  });
});
