/**
 * Wait node (docs/workflow-engine.md, "Wait"): parks the run through the executor's generic parking
 * (NodeResult.park) and, when the run is woken, answers `{ resumedAt, resumedBy, body? }` and the
 * branch to follow: `resumed` (timer, resume URL, Approve), `rejected` (Reject), `timeout`.
 */
import { WAIT_MAX_MS, WAIT_UNITS, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { NodeHandler } from './node-handler.ts';

export type WaitParams = NodeParams<'wait'>;
export interface WaitInput {
  mode: WaitParams['mode'];
  amount: string;
  unit: keyof typeof WAIT_UNITS;
  until: string;
  timeoutAmount: string;
  timeoutUnit: keyof typeof WAIT_UNITS;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

function durationMs(amount: string, unit: keyof typeof WAIT_UNITS, what: string): number {
  const n = Number(amount.trim());
  if (amount.trim() === '' || !Number.isFinite(n) || n < 0) throw new NodeFailedError(`${what} "${amount}" is not a non-negative number`);
  const ms = n * WAIT_UNITS[unit];
  if (ms > WAIT_MAX_MS) throw new NodeFailedError(`${what} ${amount} ${unit} is longer than the limit of 30 days`);
  return ms;
}

export const waitHandler: NodeHandler<WaitParams, WaitInput> = {
  isAction: false,
  render: (params, renderer) => ({
    mode: params.mode,
    amount: renderer.renderString(params.amount ?? ''),
    unit: params.unit ?? 'hours',
    until: renderer.renderString(params.until ?? ''),
    timeoutAmount: renderer.renderString(params.timeoutAmount ?? ''),
    timeoutUnit: params.timeoutUnit ?? 'days',
  }),
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (ctx.resumed) {
      const { resumedBy, at, body } = ctx.resumed;
      const branch = resumedBy === 'reject' ? 'rejected' : resumedBy === 'timeout' ? 'timeout' : 'resumed';
      return { output: { resumedAt: at, resumedBy, ...(body !== undefined ? { body } : {}) }, branch };
    }
    const now = ctx.ports.clock();
    if (input.mode === 'resume') {
      const timeoutAt = input.timeoutAmount.trim() ? new Date(now.getTime() + durationMs(input.timeoutAmount, input.timeoutUnit, 'the timeout')) : undefined;
      return {
        output: { waitingFor: 'resume', ...(timeoutAt ? { timeoutAt: timeoutAt.toISOString() } : {}) },
        park: { resumable: true, ...(timeoutAt ? { timeoutAt } : {}) },
      };
    }
    let until: Date;
    if (input.mode === 'duration') until = new Date(now.getTime() + durationMs(input.amount, input.unit, 'the duration'));
    else {
      const text = input.until.trim();
      if (!ISO_DATE_TIME.test(text) || Number.isNaN(Date.parse(text)))
        throw new NodeFailedError(`"${input.until}" is not an ISO 8601 date-time with a time zone (e.g. 2027-01-31T09:00:00Z)`);
      until = new Date(text);
      if (until.getTime() - now.getTime() > WAIT_MAX_MS) throw new NodeFailedError(`${text} is more than 30 days ahead`);
    }
    // A time already passed continues at once: no park, no timer.
    if (until.getTime() <= now.getTime()) return { output: { resumedAt: now.toISOString(), resumedBy: 'timer' }, branch: 'resumed' };
    return { output: { waitingUntil: until.toISOString() }, park: { until } };
  },
};
