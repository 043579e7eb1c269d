/**
 * Run this step (docs/workflow-engine.md, "Testing one step"): one node, as the editor holds it,
 * executed once against a sample payload and earlier nodes' outputs, through the executor itself
 * (a one-node graph: the same render → expressions → mask → execute path, the same limits, the
 * SSRF-guarded HTTP client, the owner's credentials, redaction of their values). No run, no sample,
 * no checkpoint: each test is one row of the owner's step-test list instead (StepTestLog; the route
 * records it and limits tests per owner). Action nodes do their work for real.
 */
import { randomUUID } from 'node:crypto';
import type { StepTestResult, TriggerEvent, WorkflowNode } from '@flowdesk/contracts';
import { executeWorkflow, type RunLimits } from './executor.ts';
import { credentialSecrets, redactSecrets } from './mask.ts';
import type { Clock, CredentialResolver, CredentialValue, HttpClient, MailSender, LogPort, RunMetrics, Sandbox, WorkspaceWrites } from './ports.ts';
import { credentialNames } from './template.ts';
import { withOrigin } from './process-trigger.ts';

/** A tested step's wall time limit (the run's own limit when lower). */
export const STEP_TEST_TIMEOUT_MS = 30_000;

export interface StepTestDeps {
  credentials?: CredentialResolver;
  workspace: Pick<WorkspaceWrites, 'createTask' | 'nodes'>;
  http: HttpClient;
  mail?: MailSender;
  clock: Clock;
  log: LogPort;
  metrics?: RunMetrics;
  /** Where Code steps and sandboxed expressions run, as in a run. */
  sandbox: Sandbox;
  limits?: Partial<RunLimits>;
}

/** What the owner's list keeps of one step test (no input or output: those stay with the caller). */
export interface StepTestRecord {
  workflowId: string;
  nodeId: string;
  nodeType: string;
  status: string;
  error: string | null;
  /** HTTP Request: `<METHOD> <url as recorded>`; null for other nodes. */
  request: string | null;
  durationMs: number;
}

/** The owner's record of step tests (adapters/step-test-store.ts). */
export interface StepTestLog {
  record(ownerId: string, record: StepTestRecord): Promise<void>;
}

/** The list entry of one step test's result. */
export function stepTestRecordOf(workflowId: string, result: StepTestResult): StepTestRecord {
  const { step } = result;
  const input = step.input as { method?: unknown; url?: unknown } | null;
  return {
    workflowId,
    nodeId: step.nodeId,
    nodeType: step.type,
    status: step.status,
    error: step.error ?? null,
    request:
      step.type === 'http_request' && input && typeof input.url === 'string'
        ? `${typeof input.method === 'string' ? input.method : ''} ${input.url}`.trim()
        : null,
    durationMs: step.durationMs,
  };
}

export interface StepTestInput {
  workflowId: string;
  ownerId: string;
  node: WorkflowNode;
  payload: Record<string, unknown>;
  /** Earlier nodes' outputs by id ({{nodes.<id>.…}}). */
  nodes: Record<string, unknown>;
  /** A step of a For each body: the item and index it is tried with ({{item}}, {{index}}). */
  loop?: { item: unknown; index: number };
}

export async function testStep(input: StepTestInput, deps: StepTestDeps): Promise<StepTestResult> {
  const at = deps.clock().toISOString();
  // The node's own "on error" is for runs; a test shows the failure as it is.
  const node = { ...input.node, onError: 'fail' } as WorkflowNode;
  let credentials: Map<string, CredentialValue> | undefined;
  const names = credentialNames(node);
  if (names.length > 0) {
    try {
      if (!deps.credentials) throw new Error('the credentials store is not configured on this server (CREDENTIALS_KEY)');
      credentials = await deps.credentials.resolve(input.ownerId, names);
    } catch (err) {
      const error = `credentials could not be read: ${(err as Error).message}`;
      return { step: { nodeId: node.id, type: node.type, status: 'failed', input: null, output: null, error, startedAt: at, durationMs: 0 }, warnings: [] };
    }
  }
  const event: TriggerEvent = {
    // A fresh event per test: an action node's idempotency key differs each time, so each test acts.
    eventId: `test_${randomUUID()}`,
    workflowId: input.workflowId,
    ownerId: input.ownerId,
    source: 'manual',
    startedBy: input.ownerId,
    receivedAt: at,
    payload: input.payload,
    headers: {},
  };
  let branch: string | undefined;
  const secrets = credentialSecrets(credentials);
  // One step, waited for by a person: answered within STEP_TEST_TIMEOUT_MS (runs have no overall wall
  // time any more; the node's own limits still end it in the background).
  let timer: NodeJS.Timeout | undefined;
  const tooLong = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the step did not finish within ${STEP_TEST_TIMEOUT_MS / 1000} s`)), STEP_TEST_TIMEOUT_MS);
  });
  const running = executeWorkflow({
    // A disabled step is tested as it would run enabled: "Run this step" asks for it.
    workflow: { id: input.workflowId, ownerId: input.ownerId, graph: { nodes: [{ ...node, disabled: false }], edges: [{ from: 'trigger', to: node.id }] } },
    event,
    options: { limits: deps.limits },
    stepTest: {
      earlierOutputs: new Map(Object.entries(input.nodes)),
      ...(input.loop ? { loopItem: input.loop } : {}),
      onResult: (_id, result) => {
        branch = result.branch;
      },
    },
    ports: {
      http: deps.http,
      ...(deps.mail ? { mail: deps.mail } : {}),
      clock: deps.clock,
      log: secrets.length === 0 ? deps.log : redactingLog(deps.log, secrets),
      metrics: deps.metrics,
      sandbox: deps.sandbox,
      credentials,
      // As in a run: the task carries this workflow as its origin (its change event never starts it again).
      createTask: (ownerId, task, { signal, idempotencyKey }) =>
        deps.workspace.createTask(ownerId, task, signal, { workflowId: input.workflowId, depth: 1 }, idempotencyKey),
      // The other workspace nodes (Find Tasks, Update Task, Create Note, …) as in a run, with the same origin.
      ...(deps.workspace.nodes ? { workspace: withOrigin(deps.workspace.nodes, { workflowId: input.workflowId, depth: 1 }) } : {}),
    },
  });
  const record = await Promise.race([running, tooLong])
    .catch((err: unknown) => ({ steps: [], warnings: [], error: (err as Error).message }))
    .finally(() => clearTimeout(timer));
  const step = record.steps[0] ?? {
    nodeId: node.id,
    type: node.type,
    status: 'failed' as const,
    input: null,
    output: null,
    error: record.error ?? 'the step did not run',
    startedAt: at,
    durationMs: 0,
  };
  const result: StepTestResult = { step, warnings: record.warnings, ...(branch !== undefined ? { branch } : {}) };
  return secrets.length === 0 ? result : redactSecrets(result, secrets);
}

/** Credential values never reach a log line (as in process-trigger.ts). */
const redactingLog = (log: LogPort, secrets: string[]): LogPort => ({
  info: (obj, msg) => log.info(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
  warn: (obj, msg) => log.warn(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
  error: (obj, msg) => log.error(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
});
