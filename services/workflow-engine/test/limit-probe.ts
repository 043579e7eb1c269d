// Runs one workflow in this worker thread and posts how it ended and how long it took
// (time-limits.test.ts): a limit that no longer holds then shows as a probe that never answers,
// which the test's main thread, never blocked, notices and ends.
import { parentPort, workerData } from 'node:worker_threads';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { fixedEvent, runInMemory } from './support.ts';

const { graph } = workerData as { graph: WorkflowGraph };
const started = performance.now();
const { record } = await runInMemory(graph, fixedEvent('evt-probe', { n: 1 }));
parentPort!.postMessage({ status: record.status, error: record.error ?? null, ms: performance.now() - started });
