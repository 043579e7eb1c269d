import { describe, expect, it } from 'vitest';
import { formFields, nodeDefinition } from '@flowdesk/contracts/nodes';
import { projectOptions } from './StepForm.tsx';

const projectField = (type: string) => formFields(nodeDefinition(type)!).find((f) => f.key === 'projectId')!;
const projects = [{ id: '00000000-0000-4000-8000-000000000001', name: 'Website' }];

describe('the project select', () => {
  it('Find Tasks: the empty value is no filter, not the inbox', () => {
    const options = projectOptions(projectField('find_tasks'), projects, '');
    expect(options[0]).toEqual({ value: '', label: 'Any project (no filter)' });
    expect(options.map((o) => o.label)).not.toContain('No project (inbox)');
  });
  it('the create nodes: the empty value puts it in the inbox', () => {
    for (const type of ['create_task', 'create_note'])
      expect(projectOptions(projectField(type), projects, '')[0]).toEqual({ value: '', label: 'No project (inbox)' });
  });
  it('the user’s projects follow, and an id not among them is kept', () => {
    expect(projectOptions(projectField('create_task'), projects, '{{trigger.project}}').map((o) => o.label)).toEqual([
      'No project (inbox)',
      'Website',
      '{{trigger.project}}',
    ]);
  });
});
