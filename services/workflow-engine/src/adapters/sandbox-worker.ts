/**
 * One sandbox worker thread (adapters/sandbox-pool.ts starts it): runs Code steps in QuickJS and
 * expressions in JSONata (code-sandbox.ts inProcessSandbox), one job at a time, and answers
 * each with its value or its error. Everything it does, the host helpers (hash, HMAC, base64)
 * included, counts inside the job's deadline, which the pool's thread enforces by terminating this
 * one. Error text is capped here, before it is copied back.
 */
import { parentPort } from 'node:worker_threads';
import { ExpressionError } from '@flowdesk/contracts/expressions';
import { CodeError, type SandboxScope } from '../domain/sandbox-port.ts';
import { inProcessSandbox, runCode, warmUp } from './code-sandbox.ts';

/** What a job asks a worker to do. */
export type JobMessage =
  { kind: 'code'; code: string; data: SandboxScope; timeoutMs: number } | { kind: 'expressions'; sources: readonly string[]; scope: SandboxScope };
export type WorkerJob = JobMessage & { id: number };

export type WorkerAnswer =
  | { ready: true }
  | { id: number; ok: true; value: unknown }
  | {
      id: number;
      ok: false;
      error: { type: 'code'; message: string } | { type: 'expression'; source: string; reason: string } | { type: 'other'; message: string };
    };

const port = parentPort;
if (!port) throw new Error('sandbox-worker runs as a worker thread (adapters/sandbox-pool.ts)');

port.on('message', (job: WorkerJob) => {
  void run(job).then((answer) => port.postMessage(answer));
});

async function run(job: WorkerJob): Promise<WorkerAnswer> {
  try {
    const value =
      job.kind === 'code'
        ? await runCode(job.code, job.data, { timeoutMs: job.timeoutMs })
        : await inProcessSandbox.evaluate({ ownerId: '', sources: job.sources, scope: job.scope });
    return { id: job.id, ok: true, value };
  } catch (err) {
    if (err instanceof CodeError) return { id: job.id, ok: false, error: { type: 'code', message: err.message } };
    if (err instanceof ExpressionError)
      return { id: job.id, ok: false, error: { type: 'expression', source: err.source, reason: err.reason.slice(0, 65_536) } };
    return { id: job.id, ok: false, error: { type: 'other', message: String((err as Error)?.message ?? err).slice(0, 65_536) } };
  }
}

// Loaded (QuickJS's WebAssembly compiled) before the first job, so a job's deadline is its own time.
await warmUp();
port.postMessage({ ready: true } satisfies WorkerAnswer);
