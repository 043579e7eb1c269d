/**
 * Dry run (docs/workflow-engine.md, "Dry run"): the editor's graph (saved or not) walked on the
 * workflow's sample so that later steps' previews and the variable picker have outputs before any
 * real run. Through the executor itself (expressions in the sandbox, the node's limits, the owner's
 * credentials where a side-effect-free step names one), with its dry-run scope: an action (a node
 * type whose handler has `isAction`: HTTP Request, Send Email, Create Task, Slack, AI, Run workflow,
 * …), a Wait and a Verify signature are never executed (executor.ts, dryRunStandIn) — each is
 * answered `not_run` with the output the caller assumed for it (the last run's) or none. No run, no
 * checkpoint, no sample write, no record.
 */
import { randomUUID } from 'node:crypto';
import { DRY_RUN_TIMEOUT_MS, type DryRunResult, type DryRunStep, type RunStep, type TriggerEvent, type WorkflowGraph } from '@flowdesk/contracts';
import { executeWorkflow } from './executor.ts';
import { credentialSecrets, redactSecrets } from './mask.ts';
import type { CredentialValue, HttpClient, WorkspaceNodesPort } from './ports.ts';
import { credentialNames } from './template.ts';
import { withOrigin } from './process-trigger.ts';
import type { StepTestDeps } from './step-test.ts';
import { nodeHandlers } from './nodes/index.ts';

export interface DryRunInput {
  workflowId: string;
  ownerId: string;
  graph: WorkflowGraph;
  payload: Record<string, unknown>;
  /** Outputs to stand for the steps that are not executed, by node id. */
  assumed: Record<string, unknown>;
}

/** A dry run reads the workspace (Find Tasks, Get Task, …) as a run does; it has no port that writes. */
export type DryRunDeps = Omit<StepTestDeps, 'http' | 'mail'>;

const handlers = nodeHandlers();

export async function dryRun(input: DryRunInput, deps: DryRunDeps, timeoutMs = DRY_RUN_TIMEOUT_MS): Promise<DryRunResult> {
  const at = deps.clock().toISOString();
  // Credentials of the steps that execute (never an action's): resolved only when named.
  const names = [...new Set(input.graph.nodes.filter((n) => !handlers[n.type].isAction).flatMap((n) => credentialNames(n)))];
  let credentials: Map<string, CredentialValue> | undefined;
  const warnings: string[] = [];
  if (names.length > 0 && deps.credentials) {
    try {
      credentials = await deps.credentials.resolve(input.ownerId, names);
    } catch (err) {
      warnings.push(`credentials could not be read: ${(err as Error).message}`);
    }
  }
  const event: TriggerEvent = {
    eventId: `dry_${randomUUID()}`,
    workflowId: input.workflowId,
    ownerId: input.ownerId,
    source: 'manual',
    startedBy: input.ownerId,
    receivedAt: at,
    payload: input.payload,
    headers: {},
  };
  // A failing step does not end a dry run (its error is its output and the steps after it still show
  // what is known), and is not retried: a preview waits for no backoff.
  const graph: WorkflowGraph = {
    ...input.graph,
    nodes: input.graph.nodes.map(({ retry: _retry, ...n }) => ({ ...n, onError: 'continue' })),
  };
  const notRun = new Set<string>();
  const branches = new Map<string, string>();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    // At the deadline the walk stops before its next step (the cancel switch); a step still in flight past a grace ends the answer.
    timer = setTimeout(() => {
      timedOut = true;
      timer = setTimeout(() => reject(new Error(`the dry run did not finish within ${timeoutMs / 1000} s`)), 2_000);
    }, timeoutMs);
  });
  const secrets = credentialSecrets(credentials);
  const running = executeWorkflow({
    workflow: { id: input.workflowId, ownerId: input.ownerId, graph },
    event,
    options: { limits: deps.limits },
    control: { cancelled: () => timedOut },
    stepTest: { onResult: (id, result) => void (result.branch !== undefined && branches.set(id, result.branch)) },
    dryRun: { assumed: new Map(Object.entries(input.assumed)), onNotRun: (id, item) => notRun.add(`${id}#${item ?? ''}`) },
    ports: {
      // Every port that sends or writes is left out: a stand-in never reaches one, and an executed
      // step that tried would fail. Only the clock, the sandbox, the credentials and workspace reads.
      http: refusingHttp,
      clock: deps.clock,
      log: deps.log,
      metrics: deps.metrics,
      sandbox: deps.sandbox,
      credentials,
      createTask: () => Promise.reject(new Error('a dry run creates nothing')),
      ...(deps.workspace.nodes ? { workspace: readsOnly(withOrigin(deps.workspace.nodes, { workflowId: input.workflowId, depth: 1 })) } : {}),
    },
  });
  const record = await Promise.race([running, deadline])
    .catch((err: unknown) => ({ steps: [], warnings: [], error: (err as Error).message }))
    .finally(() => clearTimeout(timer));
  const steps: DryRunStep[] = (record.steps as RunStep[]).map((s) => {
    const standIn = s.status === 'skipped' && notRun.has(`${s.nodeId}#${s.item ?? ''}`);
    const branch = s.item === undefined ? branches.get(s.nodeId) : undefined;
    return {
      nodeId: s.nodeId,
      type: s.type,
      status: standIn ? 'not_run' : s.status === 'waiting' ? 'not_run' : s.status,
      output: s.output ?? null,
      error: s.error,
      ...(branch !== undefined ? { branch } : {}),
      ...(s.item !== undefined ? { item: s.item } : {}),
    };
  });
  const result: DryRunResult = {
    steps,
    warnings: [...warnings, ...record.warnings],
    error: timedOut ? `the dry run stopped after ${timeoutMs / 1000} s; later steps were not reached` : (record.error ?? null),
  };
  return secrets.length === 0 ? result : redactSecrets(result, secrets);
}

/** The HTTP port of a dry run: no request leaves (an HTTP Request step is a stand-in; nothing else sends). */
const refusingHttp: HttpClient = { send: () => Promise.reject(new Error('a dry run sends no request')) };

/** The workspace as a dry run sees it: reads pass (Find Tasks, Get Task, Get Project), writes are refused. */
const readsOnly = (nodes: WorkspaceNodesPort): WorkspaceNodesPort => ({
  findTasks: (...a) => nodes.findTasks(...a),
  getTask: (...a) => nodes.getTask(...a),
  getProject: (...a) => nodes.getProject(...a),
  updateTask: () => Promise.reject(new Error('a dry run changes nothing')),
  create: () => Promise.reject(new Error('a dry run creates nothing')),
});
