// The engine's own owner checks in processTriggerEvent (domain/process-trigger.ts), over in-memory
// ports: a trigger event runs a workflow only when the event's owner owns it (an event naming
// another user's workflow is dropped: nothing runs, nothing is recorded), and a failed run starts its
// error workflow only when that workflow is the same owner's (and never from an error workflow's run). workspace-api refuses such an
// errorWorkflowId on save; these are the engine's checks behind it (its definitions arrive by events).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TriggerEvent } from '@flowdesk/contracts';
import { processTriggerEvent, type ProcessDeps } from '../src/domain/process-trigger.ts';
import type { RunWrite } from '../src/domain/ports.ts';

const ANN = '00000000-0000-4000-8000-0000000000a1';
const BOB = '00000000-0000-4000-8000-0000000000b2';

interface Def {
  id: string;
  ownerId: string;
  errorWorkflowId?: string;
  graph: unknown;
}
/** A step that always fails: a POST the HTTP port refuses. */
const failing = {
  nodes: [{ id: 'call', type: 'http_request', params: { method: 'POST', url: 'https://example.com/hook' } }],
  edges: [{ from: 'trigger', to: 'call' }],
};

function engine(defs: Def[]) {
  const claims: RunWrite[] = [];
  const sent: string[] = [];
  const errorRuns: TriggerEvent[] = [];
  const byId = new Map(defs.map((d) => [d.id, { version: 1, active: true, triggerType: 'webhook', executionOrder: 'parallel', ...d }]));
  const deps = {
    runs: {
      isUnstorable: () => false,
      claim: async (w: RunWrite) => (claims.push(w), 'new' as const),
      checkpoint: async () => {},
      checkpoints: async () => new Map(),
      keepCancelledSteps: async () => {},
      getByEvent: async () => ({ id: 'run-1' }),
    },
    definitions: { get: async (id: string) => byId.get(id) ?? null, refresh: async (id: string) => byId.get(id) ?? null },
    workspace: { createTask: async () => ({}) },
    samples: { keep: () => {} },
    http: {
      send: async (req: { url: string }) => {
        sent.push(req.url);
        throw new Error('connection refused');
      },
    },
    clock: () => new Date('2026-03-02T09:00:00.000Z'),
    log: { info: () => {}, warn: () => {}, error: () => {} },
    metrics: { runStarted: () => {}, runFinished: () => {} },
    startErrorWorkflow: async (event: TriggerEvent) => void errorRuns.push(event),
  } as unknown as ProcessDeps;
  const deliver = (workflowId: string, ownerId: string, source: TriggerEvent['source'] = 'webhook') =>
    processTriggerEvent(
      { eventId: `evt_${workflowId}_${ownerId}_${source}`, workflowId, ownerId, source, receivedAt: '2026-03-02T09:00:00.000Z', payload: {}, headers: {} },
      deps,
    );
  return { deliver, claims, sent, errorRuns };
}

test("an event naming another owner's workflow runs nothing and records nothing", async () => {
  const e = engine([{ id: 'wf-ann', ownerId: ANN, graph: failing }]);
  assert.equal(await e.deliver('wf-ann', BOB), 'workflow-gone');
  assert.equal(e.claims.length, 0, 'no run recorded, for either owner');
  assert.equal(e.sent.length, 0, "Ann's workflow sent no request");
  // Ann's own event runs it.
  assert.equal(await e.deliver('wf-ann', ANN), 'ran');
  assert.equal(e.claims[0]!.ownerId, ANN);
  assert.deepEqual(e.sent, ['https://example.com/hook']);
});

test("a failed run never starts an error workflow of another owner; its owner's own one starts", async () => {
  const e = engine([
    { id: 'bob-handler', ownerId: BOB, graph: { nodes: [], edges: [] } },
    { id: 'ann-handler', ownerId: ANN, graph: { nodes: [], edges: [] } },
    { id: 'wf-foreign', ownerId: ANN, errorWorkflowId: 'bob-handler', graph: failing },
    { id: 'wf-own', ownerId: ANN, errorWorkflowId: 'ann-handler', graph: failing },
  ]);
  assert.equal(await e.deliver('wf-foreign', ANN), 'ran');
  assert.equal(e.claims.at(-1)!.status, 'failed');
  assert.equal(e.errorRuns.length, 0, "Bob's workflow is not started by Ann's failure");
  assert.equal(await e.deliver('wf-own', ANN), 'ran');
  assert.deepEqual(
    e.errorRuns.map((r) => [r.workflowId, r.ownerId, r.source]),
    [['ann-handler', ANN, 'error']],
  );
});

test("an error workflow's own failed run starts no other error workflow (no chain, no loop)", async () => {
  const e = engine([
    { id: 'last-resort', ownerId: ANN, graph: { nodes: [], edges: [] } },
    { id: 'handler', ownerId: ANN, errorWorkflowId: 'last-resort', graph: failing },
  ]);
  assert.equal(await e.deliver('handler', ANN, 'error'), 'ran');
  assert.equal(e.claims.at(-1)!.status, 'failed');
  assert.equal(e.errorRuns.length, 0);
  // The same workflow failing on a webhook does start it.
  assert.equal(await e.deliver('handler', ANN, 'webhook'), 'ran');
  assert.deepEqual(
    e.errorRuns.map((r) => r.workflowId),
    ['last-resort'],
  );
});
