import Type from 'typebox';
import { defineNode, Templated } from './define.ts';
import { TAGS_HINT } from './workspace-fields.ts';

export const createNote = defineNode({
  type: 'create_note',
  action: true,
  label: 'Create Note',
  description: "Creates a note as the workflow's owner (exactly once per run step).",
  idPrefix: 'note',
  icon: 'box',
  color: 'teal',
  params: Type.Object(
    {
      title: Templated(500),
      content: Type.Optional(Templated(100_000)),
      projectId: Type.Optional(Templated(200)),
      tags: Type.Optional(Templated(2_000)),
    },
    { additionalProperties: false },
  ),
  fields: {
    title: { label: 'Title', template: true, placeholder: 'Call notes: {{trigger.customer.name}}' },
    content: { label: 'Content', template: true, multiline: true },
    projectId: { label: 'Project', widget: 'project' },
    tags: TAGS_HINT,
  },
  output: 'The created note: `{{nodes.<id>.id}}`, `{{nodes.<id>.title}}`, …',
  summary: (p) => p.title || '(no title yet)',
});
