import Type from 'typebox';
import { defineNode, Templated } from './define.ts';
import { DATE_HINT, STATUS_HINT } from './workspace-fields.ts';

/** The most tasks one Find Tasks returns (its `limit`, and `returnAll`): the engine reads pages of 100 up to it. */
export const FIND_TASKS_MAX = 1000;

export const findTasks = defineNode({
  type: 'find_tasks',
  action: false,
  label: 'Find Tasks',
  description: "Lists the owner's tasks matching filters (project, status, tag, due before, overdue, text), newest first.",
  idPrefix: 'find_tasks',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object(
    {
      projectId: Type.Optional(Templated(200)),
      status: Type.Optional(Templated(200)),
      tag: Type.Optional(Templated(200)),
      dueBefore: Type.Optional(Templated(200)),
      overdue: Type.Optional(Type.Boolean()),
      text: Type.Optional(Templated(200)),
      returnAll: Type.Optional(Type.Boolean()),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FIND_TASKS_MAX })),
    },
    { additionalProperties: false },
  ),
  fields: {
    // Empty is no filter (tasks of every project and the inbox), not "the inbox".
    projectId: { label: 'Project', widget: 'project', placeholder: 'Any project (no filter)' },
    status: { ...STATUS_HINT, description: 'One status or several, comma-separated.' },
    tag: { label: 'Tag', template: true, trim: true },
    dueBefore: DATE_HINT('Due before'),
    overdue: { label: 'Only overdue', default: false, description: 'On: only open tasks whose due date has passed.' },
    text: { label: 'Text', template: true, trim: true, description: 'Found in the title or the notes.' },
    returnAll: { label: 'Return all', default: false, description: `On: every match, up to ${FIND_TASKS_MAX}.` },
    limit: { label: 'Limit', widget: 'json', description: `At most ${FIND_TASKS_MAX} (default 25).` },
  },
  output: '`{{nodes.<id>.items}}` (the tasks, for For each), `{{nodes.<id>.count}}`, `{{nodes.<id>.hasMore}}`.',
  summary: (p) => [p.status, p.tag && `#${p.tag}`, p.text && `“${p.text}”`].filter(Boolean).join(' ') || 'all tasks',
});
