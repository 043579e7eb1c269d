import Type from 'typebox';
import { defineNode } from './define.ts';

export const code = defineNode({
  type: 'code',
  action: false,
  label: 'Code',
  description:
    'Runs JavaScript in a WebAssembly sandbox (QuickJS: no network, files or host objects; 1 s, 32 MB) on the trigger and earlier outputs, and outputs what it returns (JSON).',
  idPrefix: 'code',
  icon: 'braces',
  color: 'orange',
  params: Type.Object({ code: Type.String({ minLength: 1, maxLength: 20_000 }) }, { additionalProperties: false }),
  fields: {
    code: {
      label: 'JavaScript',
      multiline: true,
      placeholder: 'return { total: trigger.lines.reduce((s, l) => s + l.qty * l.price, 0) };',
      description:
        'A function body: `trigger`, `headers`, `nodes`, `item`, `index` are in scope; `return` a JSON value. Helpers: flowdesk.hash(alg, text, enc), flowdesk.hmac(alg, key, text, enc), flowdesk.base64Encode/Decode(text), flowdesk.now(), flowdesk.addDays(iso, n).',
    },
  },
  output: 'What the code returns (`undefined` as `null`): `{{nodes.<id>.<field>}}`.',
  summary: (p) => (p.code.trim() ? (p.code.trim().split('\n')[0] ?? '').slice(0, 60) : 'Write the code'),
});
