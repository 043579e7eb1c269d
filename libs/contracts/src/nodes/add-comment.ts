import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const addComment = defineNode({
  type: 'add_comment',
  action: true,
  label: 'Add Comment',
  description: "Comments on a task as the workflow's owner (exactly once per run step).",
  idPrefix: 'comment',
  icon: 'box',
  color: 'teal',
  params: Type.Object({ taskId: Templated(200), body: Templated(10_000) }, { additionalProperties: false }),
  fields: {
    taskId: { label: 'Task id', template: true, trim: true, placeholder: '{{nodes.task_1.id}}' },
    body: { label: 'Comment', template: true, multiline: true },
  },
  output: 'The comment: `{{nodes.<id>.id}}`, `{{nodes.<id>.body}}`, …',
  summary: (p) => p.body.slice(0, 60) || '(no comment yet)',
});
