import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

/** How deep runs may start runs (a run started by a person or an outside event is at depth 0). */
export const RUN_WORKFLOW_MAX_DEPTH = 5;
/** The longest wait for a sub-workflow's result (30 days, the Wait node's limit). */
export const RUN_WORKFLOW_MAX_TIMEOUT_MS = 30 * 24 * 3_600_000;

export const runWorkflow = defineNode({
  type: 'run_workflow',
  action: true,
  label: 'Run workflow',
  description: "Starts another of the owner's workflows with a payload and, by default, waits (parked) for its result.",
  idPrefix: 'run',
  icon: 'git-branch',
  color: 'grape',
  params: Type.Object(
    {
      workflowId: Templated(200),
      /** The child's trigger payload: a JSON object, string leaves templated. */
      payload: Type.Optional(Type.Unknown()),
      wait: Type.Optional(Type.Boolean()),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 1_000, maximum: RUN_WORKFLOW_MAX_TIMEOUT_MS })),
    },
    { additionalProperties: false },
  ),
  fields: {
    workflowId: {
      label: 'Workflow',
      widget: 'workflow',
      trim: true,
      description: 'One of your workflows (active or not); it runs with the payload as {{trigger}}. Over the API the id may be a {{variable}}.',
    },
    payload: {
      label: 'Payload (JSON object)',
      widget: 'json',
      template: true,
      multiline: true,
      noun: 'payload',
      placeholder: '{\n  "orderId": "{{trigger.order.id}}"\n}',
    },
    wait: { label: 'Wait for its result', default: true, description: 'On (default): park until it finishes; off: start it and go on.' },
    timeoutMs: { label: 'Timeout (ms)', widget: 'json', description: 'When waiting: fail after this long (1000 to 30 days; default none).' },
  },
  output:
    "`{ runId, status, output, error }` when waiting (`output`: the last succeeded step's output of the child; a child that did not succeed fails the node); `{ eventId, started: true }` otherwise.",
  summary: (p) => `${p.wait === false ? 'Start' : 'Run'} ${p.workflowId || '(no workflow yet)'}`,
});
