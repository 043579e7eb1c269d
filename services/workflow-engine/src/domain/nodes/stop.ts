/**
 * Stop node: ends the run. `failed` fails this step with the message (the run's error names it);
 * `succeeded` ends the run as it stands, and no other step runs after it (NodeResult.end).
 */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { NodeHandler } from './node-handler.ts';

export type StopParams = NodeParams<'stop'>;
export interface StopInput {
  status: StopParams['status'];
  message: string;
}

export const stopHandler: NodeHandler<StopParams, StopInput> = {
  isAction: false,
  render: (params, renderer) => ({ status: params.status, message: renderer.renderString(params.message ?? '') }),
  mask: (input) => input,
  execute: async (input) => {
    if (input.status === 'failed')
      throw new NodeFailedError(input.message || 'the workflow stopped the run as failed', { status: 'failed', message: input.message });
    return { output: { status: 'succeeded', message: input.message }, end: true };
  },
};
