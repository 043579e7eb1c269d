// The README's counts of what the console offers are the registries' (a new node type, trigger type
// or template that leaves them stale fails here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { NODE_TYPES, TRIGGER_TYPE_NAMES, WORKFLOW_TEMPLATES } from '../src/index.ts';

const readme = (await readFile(new URL('../../../README.md', import.meta.url), 'utf8')).replace(/\s+/g, ' ');
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
const countBefore = (noun: string): number[] =>
  [...readme.matchAll(new RegExp(`\\b(\\d+|${WORDS.join('|')}) ${noun}`, 'gi'))].map((m) =>
    /^\d+$/.test(m[1]!) ? Number(m[1]) : WORDS.indexOf(m[1]!.toLowerCase()),
  );

test('the README counts the step types, trigger types and ready workflows there are', () => {
  assert.deepEqual(countBefore('step types'), [NODE_TYPES.length]);
  assert.deepEqual(countBefore('trigger types'), [TRIGGER_TYPE_NAMES.length]);
  assert.deepEqual(countBefore('ready workflows'), [WORKFLOW_TEMPLATES.length]);
});
