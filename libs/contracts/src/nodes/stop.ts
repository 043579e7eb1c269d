import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated } from './define.ts';

export const stop = defineNode({
  type: 'stop',
  action: false,
  label: 'Stop',
  description: 'Ends the run here, as succeeded or as failed with a message; no other step runs after it.',
  idPrefix: 'stop',
  icon: 'box',
  color: 'red',
  params: Type.Object(
    {
      status: StringEnum(['succeeded', 'failed']),
      message: Type.Optional(Templated(2_000)),
    },
    { additionalProperties: false },
  ),
  fields: {
    status: {
      label: 'End the run as',
      default: 'failed',
      options: [
        { value: 'failed', label: 'failed' },
        { value: 'succeeded', label: 'succeeded' },
      ],
    },
    message: { label: 'Message', template: true, placeholder: 'Order {{trigger.order.id}} has no lines' },
  },
  output: "`{ status, message }`. Failed: the run's error is the message.",
  summary: (p) => `${p.status === 'failed' ? 'Fail' : 'Succeed'}${p.message ? `: ${p.message}` : ''}`,
});
