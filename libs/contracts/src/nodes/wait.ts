import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated } from './define.ts';

/** The longest wait (duration, until, and a resume's timeout): 30 days. */
export const WAIT_MAX_MS = 30 * 24 * 3_600_000;
export const WAIT_UNITS = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;
export const WAIT_BRANCHES = ['resumed', 'rejected', 'timeout'] as const;

export const wait = defineNode({
  type: 'wait',
  action: false,
  label: 'Wait',
  description:
    'Parks the run for a duration (up to 30 days), until a date-time, or until it is resumed (its resume URL, or Approve / Reject on the run page); a waiting run holds no memory and survives restarts.',
  idPrefix: 'wait',
  icon: 'box',
  color: 'yellow',
  params: Type.Object(
    {
      mode: StringEnum(['duration', 'until', 'resume']),
      amount: Type.Optional(Templated(100)),
      unit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'])),
      until: Type.Optional(Templated(2_000)),
      timeoutAmount: Type.Optional(Templated(100)),
      timeoutUnit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'])),
    },
    { additionalProperties: false },
  ),
  fields: {
    mode: {
      label: 'Wait',
      default: 'duration',
      options: [
        { value: 'duration', label: 'for a duration' },
        { value: 'until', label: 'until a date and time' },
        { value: 'resume', label: 'until resumed (URL or Approve / Reject)' },
      ],
    },
    amount: { label: 'Amount', template: true, placeholder: '1', hiddenWhen: (p) => p.mode !== 'duration', dropWhenHidden: true },
    unit: {
      label: 'Unit',
      default: 'hours',
      hiddenWhen: (p) => p.mode !== 'duration',
      dropWhenHidden: true,
    },
    until: {
      label: 'Until (ISO date-time)',
      template: true,
      placeholder: '{{trigger.remindAt}}',
      description: 'An ISO 8601 date-time such as 2027-01-31T09:00:00Z (at most 30 days ahead). A time in the past continues at once.',
      hiddenWhen: (p) => p.mode !== 'until',
      dropWhenHidden: true,
    },
    timeoutAmount: {
      label: 'Time out after (optional)',
      template: true,
      placeholder: '2',
      description: 'Empty: wait for a resume without a limit (at most 30 days). After it, the run follows the timeout branch.',
      hiddenWhen: (p) => p.mode !== 'resume',
      dropWhenHidden: true,
    },
    timeoutUnit: { label: 'Timeout unit', default: 'days', hiddenWhen: (p) => p.mode !== 'resume', dropWhenHidden: true },
  },
  branches: WAIT_BRANCHES,
  output:
    '`{ resumedAt, resumedBy, body? }`: `resumedBy` is `timer`, `resume` (the resume URL; `body` is the JSON it was sent), `approve` or `reject` (the run page; `body` as given) or `timeout`. Branch `resumed` after the timer, the URL or Approve; `rejected` after Reject; `timeout` when a resume wait timed out.',
  note: 'Connect **resumed** to what runs after the wait; **rejected** and **timeout** only matter when waiting for a resume.',
  summary: (p) =>
    p.mode === 'duration'
      ? `Wait ${p.amount ?? '?'} ${p.unit ?? 'hours'}`
      : p.mode === 'until'
        ? `Wait until ${p.until ?? '?'}`
        : `Wait for a resume${p.timeoutAmount ? ` (timeout ${p.timeoutAmount} ${p.timeoutUnit ?? 'days'})` : ''}`,
});
