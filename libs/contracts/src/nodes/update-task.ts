import Type from 'typebox';
import { defineNode, Templated } from './define.ts';
import { DATE_HINT, PRIORITY_HINT, STATUS_HINT, TAGS_HINT } from './workspace-fields.ts';

export const updateTask = defineNode({
  type: 'update_task',
  action: true,
  label: 'Update Task',
  description: "Changes a task as the workflow's owner: only the fields given (non-empty after rendering) change.",
  idPrefix: 'update_task',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object(
    {
      taskId: Templated(200),
      title: Type.Optional(Templated(500)),
      notes: Type.Optional(Templated(20_000)),
      status: Type.Optional(Templated(200)),
      priority: Type.Optional(Templated(200)),
      dueDate: Type.Optional(Templated(200)),
      tags: Type.Optional(Templated(2_000)),
      projectId: Type.Optional(Templated(200)),
    },
    { additionalProperties: false },
  ),
  fields: {
    taskId: { label: 'Task id', template: true, trim: true, placeholder: '{{nodes.task_1.id}}' },
    title: { label: 'Title', template: true },
    notes: { label: 'Description', template: true, multiline: true },
    status: STATUS_HINT,
    priority: PRIORITY_HINT,
    dueDate: DATE_HINT('Due date'),
    tags: { ...TAGS_HINT, description: 'Comma-separated; replaces the task’s tags.' },
    projectId: { label: 'Project', widget: 'project' },
  },
  output: 'The task after the change: `{{nodes.<id>.id}}`, `{{nodes.<id>.status}}`, …',
  summary: (p) => p.taskId || '(no task yet)',
});
