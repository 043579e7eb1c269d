import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const respond = defineNode({
  type: 'respond',
  action: false,
  label: 'Respond',
  description: "Answers the webhook's caller with a status, headers and a JSON body (a webhook workflow set to answer from a Respond node); the run goes on.",
  idPrefix: 'respond',
  icon: 'world-upload',
  color: 'teal',
  params: Type.Object(
    {
      /** HTTP status, 100–599 (default 200). */
      status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
      headers: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Templated(4_000))),
      /** JSON body; string leaves are templated, a string that is exactly one variable or expression keeps its type. */
      body: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  fields: {
    status: { label: 'Status', widget: 'json', placeholder: '200', description: 'HTTP status, 100–599 (default 200).' },
    headers: {
      label: 'Headers',
      widget: 'key-value',
      template: true,
      noun: 'header',
      description:
        'Allowed: custom X-* names (not reserved ones like X-Accel-Redirect), Cache-Control (private or no-store), ETag, Last-Modified, Content-Language, Retry-After; Latin-1 values.',
    },
    body: {
      label: 'Body (JSON)',
      widget: 'json',
      template: true,
      multiline: true,
      noun: 'body',
      placeholder: '{\n  "received": "{{trigger.order.id}}"\n}',
      description: 'A string that is exactly one variable keeps its type (a number stays a number).',
    },
  },
  output: '`{ status, headers, body, sent }`: what was answered; `sent` is false when a Respond node answered earlier or nobody waits.',
  note: 'Only the first Respond node a run reaches answers; a later one is recorded with a warning. Set the trigger\'s "Answer the caller" to "From a Respond node".',
  summary: (p) => `${p.status ?? 200}${p.body === undefined ? '' : ' with a body'}`,
});
