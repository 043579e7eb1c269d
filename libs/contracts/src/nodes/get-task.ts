import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const getTask = defineNode({
  type: 'get_task',
  action: false,
  label: 'Get Task',
  description: "Reads one of the owner's tasks by id.",
  idPrefix: 'task',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object({ taskId: Templated(200) }, { additionalProperties: false }),
  fields: { taskId: { label: 'Task id', template: true, trim: true, placeholder: '{{trigger.taskId}}' } },
  output: 'The task: `{{nodes.<id>.title}}`, `{{nodes.<id>.status}}`, `{{nodes.<id>.dueDate}}`, …',
  summary: (p) => p.taskId || '(no task yet)',
});
