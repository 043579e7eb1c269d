// Walks the editor's trigger registry (TRIGGER_EDITORS in TriggerPanel.tsx) against the contracts'
// trigger registry: every trigger type has a settings component, and the settings a new trigger of
// that type starts with are valid (the server accepts them, so an active workflow can switch to it).
import { isValidElement } from 'react';
import { expect, test } from 'vitest';
import { TRIGGER_TYPE_NAMES, triggerConfigProblem } from '@flowdesk/contracts';
import type { Workflow } from '../api.ts';
import { defaultTriggerConfig, TRIGGER_EDITORS } from './TriggerPanel.tsx';

test('every trigger type has a settings component, default settings the server accepts, and its activation texts', () => {
  expect(Object.keys(TRIGGER_EDITORS).sort()).toEqual([...TRIGGER_TYPE_NAMES].sort());
  for (const type of TRIGGER_TYPE_NAMES) {
    const editor = TRIGGER_EDITORS[type];
    const config = defaultTriggerConfig(type);
    expect(triggerConfigProblem(type, config), type).toBeNull();
    expect(editor.active && editor.inactive, type).toBeTruthy();
    const workflow = { id: 'w', triggerType: type, triggerConfig: config, webhook: null } as unknown as Workflow;
    const settings = editor.Settings({
      workflow,
      config,
      onDraft: () => {},
      secret: null,
      onSecret: () => {},
      onChanged: () => {},
      projects: [],
      onRunNow: () => {},
    });
    expect(isValidElement(settings), `${type} has a settings component`).toBe(true);
  }
});
