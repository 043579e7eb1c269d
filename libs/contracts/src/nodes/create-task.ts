import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const createTask = defineNode({
  type: 'create_task',
  action: true,
  label: 'Create Task',
  description: "Creates a task as the workflow's owner (their permissions and row-level security apply).",
  idPrefix: 'task',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object(
    {
      title: Templated(500),
      projectId: Type.Optional(Templated(200)),
      dueDate: Type.Optional(Templated(200)),
      notes: Type.Optional(Templated(20_000)),
      priority: Type.Optional(Templated(200)),
      tags: Type.Optional(Templated(2_000)),
    },
    { additionalProperties: false },
  ),
  fields: {
    title: { label: 'Title', template: true, placeholder: 'Call {{trigger.customer.name}}' },
    projectId: { label: 'Project', widget: 'project' },
    dueDate: {
      label: 'Due date',
      template: true,
      trim: true,
      placeholder: '2026-12-01 or {{trigger.dueDate}}',
      description: 'A date (YYYY-MM-DD) or a variable holding one.',
    },
    notes: { label: 'Notes', template: true, multiline: true },
    priority: { label: 'Priority', template: true, trim: true, placeholder: 'none, low, medium, high or urgent' },
    tags: { label: 'Tags', template: true, placeholder: 'lead, {{trigger.source}}', description: 'Comma-separated; up to 20, each without spaces.' },
  },
  output: 'The created task: `{{nodes.<id>.id}}`, `{{nodes.<id>.title}}`, …',
  summary: (p) => p.title || '(no title yet)',
});
