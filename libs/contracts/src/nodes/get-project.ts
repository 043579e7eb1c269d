import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const getProject = defineNode({
  type: 'get_project',
  action: false,
  label: 'Get Project',
  description: "Reads one of the owner's projects by id.",
  idPrefix: 'project',
  icon: 'box',
  color: 'teal',
  params: Type.Object({ projectId: Templated(200) }, { additionalProperties: false }),
  fields: { projectId: { label: 'Project id', template: true, trim: true, placeholder: '{{nodes.task_1.projectId}}' } },
  output: 'The project: `{{nodes.<id>.name}}`, `{{nodes.<id>.status}}`, …',
  summary: (p) => p.projectId || '(no project yet)',
});
