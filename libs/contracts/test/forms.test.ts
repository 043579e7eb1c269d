// The form trigger's settings (docs/triggers.md, "Form"): what workspace-api accepts on save, and the
// reason it gives — naming the field — for what it refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formConfigProblem, triggerConfigProblem } from '../src/index.ts';

const field = (over: Record<string, unknown> = {}) => ({ name: 'email', label: 'Email', type: 'email', ...over });
const form = (over: Record<string, unknown> = {}) => ({ title: 'Contact', fields: [field()], ...over });

test('a form with a title and its fields is accepted, with a description, a submit label, a thank-you text or a redirect', () => {
  for (const ok of [
    form(),
    form({ description: 'Hi', submitLabel: 'Send', thankYou: 'Thanks' }),
    form({ redirectUrl: 'https://example.com/thanks?x=1' }),
    form({ fields: [field(), field({ name: 'topic', label: 'Topic', type: 'select', options: ['A', 'B'], required: true, help: 'Pick one' })] }),
  ])
    assert.equal(formConfigProblem(ok), null, JSON.stringify(ok));
});

test('what is refused, and the reason names the field', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ fields: [field()] }, /^triggerConfig.* title/],
    [form({ title: '' }), /^triggerConfig\.title/],
    [form({ fields: [] }), /^triggerConfig\.fields/],
    [form({ fields: [field({ type: 'file' })] }), /^triggerConfig\.fields\.0\.type/],
    [form({ fields: [field({ name: '1st' })] }), /^triggerConfig\.fields\.0\.name/],
    [form({ fields: [field({ name: '_token' })] }), /^triggerConfig\.fields\.0\.name/],
    [form({ fields: [field({ name: 'submittedAt' })] }), /fields\.0\.name "submittedAt" is set by the submission itself/],
    [form({ fields: [field(), field({ label: 'Other' })] }), /fields\.1\.name "email" is used by another field/],
    [form({ fields: [field({ type: 'select' })] }), /fields\.0\.options: a select field needs at least one option/],
    [form({ fields: [field({ options: ['A'] })] }), /fields\.0\.options: only a select field has options/],
    [form({ fields: [field({ type: 'select', options: ['A', 'A'] })] }), /fields\.0\.options: each option once/],
    [form({ fields: [field({ extra: true })] }), /^triggerConfig\.fields\.0/],
    [form({ redirectUrl: 'javascript:alert(1)' }), /redirectUrl must be an http or https URL/],
    [form({ redirectUrl: 'not a url' }), /redirectUrl must be an http or https URL/],
    [form({ redirectUrl: 'https://example.com', thankYou: 'Thanks' }), /a thank-you text or a redirect URL, not both/],
    [form({ fields: Array.from({ length: 31 }, (_, i) => field({ name: `f${i}` })) }), /^triggerConfig\.fields/],
  ];
  for (const [config, reason] of cases) {
    const problem = formConfigProblem(config);
    assert.match(problem ?? 'accepted', reason, JSON.stringify(config));
    assert.equal(triggerConfigProblem('form', config), problem, 'the trigger check is the form check');
  }
});
