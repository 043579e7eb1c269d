// The workspace nodes' forms come from the registry (libs/contracts/src/nodes): each new node type's
// generated form renders a field per param, and a filled form becomes params the graph schema accepts.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { MantineProvider } from '@mantine/core';
import { Compile } from 'typebox/compile';
import { expect, test } from 'vitest';
import { nodeDefinition, WorkflowNode } from '@flowdesk/contracts';
import { emptyForm, fieldsOf, STEP_KINDS, toParams, type StepKind } from './graph.ts';
import { StepForm } from './StepForm.tsx';

const KINDS = ['create_task', 'update_task', 'find_tasks', 'get_project', 'create_note', 'create_calendar_entry', 'add_comment'] as const;
const nodeCheck = Compile(WorkflowNode);

const filled: Record<(typeof KINDS)[number], Record<string, string>> = {
  create_task: { title: 'Call {{trigger.name}}', priority: 'high', tags: 'lead, web' },
  update_task: { taskId: '{{nodes.task_1.id}}', status: 'done' },
  find_tasks: { tag: 'lead', overdue: 'true', limit: '50' },
  get_project: { projectId: '{{nodes.task_1.projectId}}' },
  create_note: { title: 'Notes', content: 'text' },
  create_calendar_entry: { title: 'Meeting', startsAt: '2026-12-01T09:00:00Z', allDay: 'false' },
  add_comment: { taskId: '{{nodes.task_1.id}}', body: 'Done' },
};

test.each(KINDS)('%s: the editor offers it, its form renders every field, a filled form is a valid node', (kind) => {
  expect(STEP_KINDS).toContain(kind);
  const data = { ...emptyForm(kind), name: '' };
  const html = renderToStaticMarkup(createElement(MantineProvider, null, createElement(StepForm, { data, onChange: () => {}, projects: [] })));
  const definition = nodeDefinition(kind)!;
  for (const field of fieldsOf(kind)) {
    expect(field.widget, `${kind}.${field.key}`).not.toBe('none');
    expect(html, `${kind} shows ${field.key}`).toContain(field.hint.label);
  }
  expect(Object.keys(definition.params.properties).sort()).toEqual(
    fieldsOf(kind as StepKind)
      .map((f) => f.key)
      .sort(),
  );
  const { params, problem } = toParams({ ...data, form: { ...data.form, ...filled[kind] } });
  expect(problem).toBeUndefined();
  expect(nodeCheck.Check({ id: 'n_1', type: kind, params }), JSON.stringify(params)).toBe(true);
});
