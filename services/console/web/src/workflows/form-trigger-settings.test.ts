// The form trigger's editor (FormTriggerSettings.tsx): a field's key from its label, the messages at
// the fields that the server would refuse, and a new form trigger's settings that it accepts.
import { expect, test } from 'vitest';
import { formConfigProblem, type FormTriggerField } from '@flowdesk/contracts';
import { defaultFormConfig, fieldProblems, keyOf } from './FormTriggerSettings.tsx';

test('a key from a label: lower case, letters, digits and _, a letter first', () => {
  expect(keyOf('Your name')).toBe('your_name');
  expect(keyOf('E-mail (work)')).toBe('e_mail_work');
  expect(keyOf('Crème brûlée')).toBe('creme_brulee');
  expect(keyOf('2nd address')).toBe('nd_address');
  expect(keyOf('!!!')).toBe('field');
  expect(new RegExp('^[A-Za-z][A-Za-z0-9_]{0,63}$').test(keyOf('x'.repeat(100)))).toBe(true);
});

test('the fields the server would refuse get a message at the input', () => {
  const f = (over: Partial<FormTriggerField>): FormTriggerField => ({ name: 'a', label: 'A', type: 'text', ...over });
  expect(fieldProblems([f({})])).toEqual({});
  expect(fieldProblems([f({ label: ' ' })])[0]?.label).toBe('Give the field a label.');
  expect(fieldProblems([f({ name: '1a' })])[0]?.name).toMatch(/A letter/);
  expect(fieldProblems([f({ name: 'submittedAt' })])[0]?.name).toMatch(/set by the submission/);
  expect(fieldProblems([f({}), f({ label: 'B' })])[1]?.name).toBe('Another field has this key.');
  expect(fieldProblems([f({ type: 'select', options: [] })])[0]?.options).toMatch(/at least one option/);
  expect(fieldProblems([f({ type: 'select', options: ['x', 'x'] })])[0]?.options).toBe('Each option once.');
  // Each of these is refused by the server's own check too.
  for (const bad of [f({ label: '' }), f({ name: '1a' }), f({ name: 'submittedAt' }), f({ type: 'select', options: [] })])
    expect(formConfigProblem({ title: 'T', fields: [bad] })).not.toBeNull();
});

test('a new form trigger starts as a contact form the server accepts', () => {
  expect(formConfigProblem(defaultFormConfig())).toBeNull();
});
