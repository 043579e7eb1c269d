// Mutation testing (docs/development.md, "Mutation testing"): StrykerJS with its command runner over
// the security and durability checks, one module at a time, each with the test files aimed at it.
// `npm run mutation` (scripts/mutation.mjs) runs every module (or those named) and prints the score of
// each; `MUTATION_MODULE=<name> npx stryker run` runs one with Stryker's own report. Not part of
// `npm test` or CI.
//
// Each module mutates line ranges (Stryker's `file:from-to`) of the checks themselves (log lines
// beside them are left out: their text is no behaviour), and `anchor` is text the range's first line must hold: when the code moves, scripts/mutation.mjs stops and says which
// range to update, instead of mutating the wrong lines.
//
// In place (`inPlace`): the workspace packages import each other through node_modules symlinks to
// the real folders, so a sandbox copy's mutants would never be loaded. Stryker restores the files when
// it ends (also on Ctrl-C); after a killed run, `git checkout -- <file>` does.
const ENGINE = 'cd services/workflow-engine && node --conditions=source --import tsx --import ../../scripts/test-exit-guard.mjs --test --test-concurrency=1';
const INGEST = 'cd services/webhook-ingest && node --conditions=source --import tsx --import ../../scripts/test-exit-guard.mjs --test --test-concurrency=1';
const AUTH = 'cd services/auth && node --conditions=source --import tsx --import ../../scripts/test-exit-guard.mjs --test --test-concurrency=1';

/** @type {{ name: string; what: string; mutate: { file: string; lines: [number, number]; anchor: string }[]; command: string; needs?: string }[]} */
export const MODULES = [
  {
    name: 'wait-store',
    what: 'wait timers: the claim of due wakes (compare-and-set, lease), Approve / Reject and Resume now by the owner',
    mutate: [
      { file: 'services/workflow-engine/src/adapters/wait-store.ts', lines: [52, 76], anchor: 'async claimDue(' },
      { file: 'services/workflow-engine/src/adapters/wait-store.ts', lines: [147, 160], anchor: 'async resumeByOwner(' },
      { file: 'services/workflow-engine/src/adapters/wait-store.ts', lines: [173, 197], anchor: 'async resumeNow(' },
    ],
    command: `${ENGINE} test/wait-store.test.ts`,
    needs: 'DATABASE_URL',
  },
  {
    name: 'owner-checks',
    what: "the engine's owner checks: an event's owner owns the workflow; an error workflow is the same owner's, never a chain",
    mutate: [
      { file: 'services/workflow-engine/src/domain/process-trigger.ts', lines: [185, 185], anchor: 'if (!workflow || workflow.ownerId !== event.ownerId)' },
      { file: 'services/workflow-engine/src/domain/process-trigger.ts', lines: [188, 188], anchor: "return { outcome: 'workflow-gone' };" },
      {
        file: 'services/workflow-engine/src/domain/process-trigger.ts',
        lines: [440, 440],
        anchor: "if (event.source === 'error' || !deps.startErrorWorkflow) return;",
      },
      {
        file: 'services/workflow-engine/src/domain/process-trigger.ts',
        lines: [443, 444],
        anchor: 'const target = await deps.definitions.get(errorWorkflowId);',
      },
      { file: 'services/workflow-engine/src/domain/process-trigger.ts', lines: [446, 446], anchor: 'return;' },
    ],
    command: `${ENGINE} test/owner-checks.test.ts`,
  },
  {
    name: 'loop-limits',
    what: "For each: the per-node cap (10,000 items) and the run's loop items summed over its loops",
    mutate: [
      { file: 'services/workflow-engine/src/domain/nodes/for-each.ts', lines: [27, 36], anchor: 'execute: async (input)' },
      { file: 'services/workflow-engine/src/domain/executor.ts', lines: [786, 796], anchor: 'if (run.loopItems + items.length > limits.maxLoopItemsPerRun)' },
    ],
    command: `${ENGINE} test/run-limits.test.ts test/foreach.test.ts`,
  },
  {
    name: 'dry-run-guard',
    what: 'a dry run (the editor previews) never executes an action, a Wait or a Verify signature: the stand-in and where it is taken',
    mutate: [
      { file: 'services/workflow-engine/src/domain/executor.ts', lines: [126, 129], anchor: 'if (handler.isAction) return {};' },
      {
        file: 'services/workflow-engine/src/domain/executor.ts',
        lines: [439, 446],
        anchor: 'const standIn = input.dryRun ? dryRunStandIn(node, handler) : null;',
      },
    ],
    command: `${ENGINE} test/dry-run.test.ts`,
  },
  {
    name: 'disabled-steps',
    what: 'a disabled step is not executed: its input passes on as its output, by its pass-through branch',
    mutate: [
      { file: 'services/workflow-engine/src/domain/executor.ts', lines: [357, 366], anchor: '} else if (node.disabled === true) {' },
      { file: 'services/workflow-engine/src/domain/executor.ts', lines: [403, 415], anchor: 'function passThrough(' },
    ],
    command: `${ENGINE} test/disabled-step.test.ts`,
  },
  {
    name: 'code-limits',
    what: "the Code sandbox's limits: heap, stack, wall time (and the error that names it)",
    mutate: [
      {
        file: 'services/workflow-engine/src/adapters/code-sandbox.ts',
        lines: [57, 64],
        anchor: 'const { timeoutMs, memoryBytes, stackBytes, maxOutputChars }',
      },
      { file: 'services/workflow-engine/src/adapters/code-sandbox.ts', lines: [84, 84], anchor: 'if (interrupted) throw new CodeError(' },
    ],
    command: `${ENGINE} test/run-limits.test.ts test/time-limits.test.ts`,
  },
  {
    name: 'sandbox-pool',
    what: "the sandbox worker pool's deadline (the worker terminated and replaced, the job failed naming the limit), the error text's cap, and a parkable job handed back only while it waits for its owner's own workers",
    mutate: [
      {
        file: 'services/workflow-engine/src/adapters/sandbox-pool.ts',
        lines: [491, 491],
        anchor: 'slot.timer = setTimeout(() => this.overran(slot), job.timeoutMs + this.options.graceMs);',
      },
      { file: 'services/workflow-engine/src/adapters/sandbox-pool.ts', lines: [534, 545], anchor: 'private overran(slot: Slot): void {' },
      { file: 'services/workflow-engine/src/adapters/sandbox-pool.ts', lines: [550, 556], anchor: 'private retire(slot: Slot): void {' },
      {
        file: 'services/workflow-engine/src/adapters/sandbox-pool.ts',
        lines: [326, 326],
        anchor: 'if (!overBudget && owner.running < this.options.perOwnerWorkers) return this.lookLater(job);',
      },
      { file: 'services/workflow-engine/src/domain/sandbox-port.ts', lines: [25, 25], anchor: 'super(capErrorText(message, CODE_LIMITS.maxErrorChars));' },
      { file: 'libs/contracts/src/expressions.ts', lines: [37, 41], anchor: 'export function capErrorText(' },
    ],
    command: `${ENGINE} test/sandbox-pool.test.ts`,
  },
  {
    name: 'expression-limits',
    what: "JSONata's guardrails: wall time, depth, sequence length",
    mutate: [{ file: 'libs/contracts/src/expressions.ts', lines: [243, 243], anchor: 'compiled = jsonata(source, { timeout: EXPRESSION_LIMITS.timeoutMs' }],
    command: `${ENGINE} test/time-limits.test.ts`,
  },
  {
    name: 'signature-compare',
    what: 'Verify signature: the digest decoded and compared whole, in constant time',
    mutate: [
      { file: 'services/workflow-engine/src/domain/nodes/verify-signature.ts', lines: [134, 144], anchor: 'function verifyPlain(' },
      { file: 'services/workflow-engine/src/domain/nodes/verify-signature.ts', lines: [202, 211], anchor: 'function decode(' },
    ],
    command: `${ENGINE} test/signature-partial.test.ts test/verify-signature.test.ts`,
  },
  {
    name: 'reply-headers',
    what: "Respond's headers: the allow list (contracts) and ingest's filter where the answer is sent",
    mutate: [
      { file: 'libs/contracts/src/webhook-reply.ts', lines: [69, 69], anchor: 'export const ALLOWED_RESPONSE_HEADERS = new Set(' },
      { file: 'libs/contracts/src/webhook-reply.ts', lines: [82, 99], anchor: 'export function responseHeaderProblem(' },
      {
        file: 'services/webhook-ingest/src/routes/webhook-trigger.ts',
        lines: [169, 169],
        anchor: 'if (!responseHeaderProblem(name, value)) reply.header(name, value)',
      },
    ],
    command: `${INGEST} test/reply-headers.test.ts && ${ENGINE.replace('cd ', 'cd ../../')} test/respond-node.test.ts`,
  },
  {
    name: 'cimd-fetch',
    what: 'Client ID Metadata Documents: the fetch and its time limit',
    mutate: [
      { file: 'services/auth/src/domain/oauth/client-metadata.ts', lines: [206, 213], anchor: 'const { maxBytes, timeoutMs } = CLIENT_METADATA_LIMITS;' },
    ],
    command: `${AUTH} test/client-metadata-timeout.test.ts`,
  },
];

const picked = MODULES.find((m) => m.name === (process.env.MUTATION_MODULE ?? MODULES[0].name));
if (!picked) throw new Error(`MUTATION_MODULE must be one of ${MODULES.map((m) => m.name).join(', ')}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: { command: picked.command },
  mutate: picked.mutate.map((r) => `${r.file}:${r.lines[0]}-${r.lines[1]}`),
  inPlace: true,
  // Stryker would otherwise add `// @ts-nocheck` to every source file of the repository (in place);
  // tsx does not type-check, so a mutant that breaks a type still runs.
  disableTypeChecks: false,
  coverageAnalysis: 'off',
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  // A mutant whose tests run past the unmutated run's time × 1.5 + 20 s is a timeout (detected: it
  // broke a limit). The bounded-time tests fail sooner than that.
  timeoutFactor: 1.5,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${picked.name}.json` },
  clearTextReporter: { allowColor: false, logTests: false },
  incremental: process.env.MUTATION_INCREMENTAL === '1',
  incrementalFile: `reports/mutation/${picked.name}.incremental.json`,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  logLevel: 'info',
  fileLogLevel: 'off',
};
