// Starting, feeding and asking the one-process stack (stack-process.ts) of the kill -9 tests
// (concurrent-durability.test.ts, durable-steps.test.ts).
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SigningKeys } from '@flowdesk/service-kit';

const STACK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stack-process.ts');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every stack process started, for the test's after() to kill what is left. */
export const children: ChildProcess[] = [];

export interface StackEnv {
  keys: SigningKeys;
  secretKey: string;
}

/** Polls `done` until true or `ceilingMs` passed; returns whether it became true. */
export async function until(done: () => Promise<boolean> | boolean, ceilingMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

export interface Stack {
  child: ChildProcess;
  apiUrl: string;
  ingestUrl: string;
  exited: Promise<void>;
}

/**
 * Starts a stack process. On a heavily loaded machine (load average ~40) a restart after kill -9 was
 * seen to exceed fastify's 10 s onReady timeout (the process exits); such a start is retried, up to 5
 * times — a slow start is not what this test is about, a lost or doubled run is. (Open: which onReady
 * hook is slow right after a kill; reported to the lead.)
 */
export async function startStack(env: StackEnv, dbConfig: unknown, allow: string, diagnostic: (m: string) => void): Promise<Stack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(env, dbConfig, allow);
    } catch (err) {
      if (attempt >= 5) throw err;
      diagnostic(`stack start ${attempt} failed (${(err as Error).message}); starting again`);
    }
  }
}

async function startStackOnce({ keys, secretKey }: StackEnv, dbConfig: unknown, allow: string): Promise<Stack> {
  const child = fork(STACK, [], {
    execArgv: ['--conditions=source', '--import', 'tsx'],
    env: { ...process.env, STACK_KEYS: JSON.stringify(keys), STACK_DB: JSON.stringify(dbConfig), STACK_SECRET_KEY: secretKey, STACK_SSRF_ALLOWLIST: allow },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = await Promise.race([
    new Promise<{ apiUrl: string; ingestUrl: string }>((r) => child.once('message', (m: { apiUrl: string; ingestUrl: string }) => r(m))),
    exited.then(() => {
      throw new Error('the stack process exited before it was ready');
    }),
  ]);
  return { child, apiUrl: ready.apiUrl, ingestUrl: ready.ingestUrl, exited };
}

export const runsOf = (s: Stack) =>
  new Promise<{ eventId: string; status: string }[]>((resolve) => {
    s.child.once('message', (m: { runs: { eventId: string; status: string }[] }) => resolve(m.runs));
    s.child.send({ q: 'runs' });
  });

/**
 * Sends `count` deliveries with 16 senders, as a real sender would: a 429 or 5xx (a trigger lookup
 * that timed out on a loaded machine) is retried; `onAccepted(n)` after each 200. Stops once the
 * process is gone (a delivery without a 200 is the sender's to retry, elsewhere).
 */
export async function send(s: Stack, wf: { id: string; webhookSecret: string }, count: number, onAccepted: (n: number) => void = () => {}) {
  const accepted: string[] = [];
  let next = 0;
  let gone = false;
  void s.exited.then(() => (gone = true));
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count && !gone) {
        const n = next++;
        for (let attempt = 1; attempt <= 20 && !gone; attempt++) {
          try {
            const res = await fetch(`${s.ingestUrl}/functions/v1/webhook-trigger/${wf.id}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
              body: JSON.stringify({ n }),
            });
            const body = (await res.json()) as { eventId?: string };
            if (res.status === 200) {
              accepted.push(body.eventId!);
              onAccepted(accepted.length);
              break;
            }
            assert.ok(res.status === 429 || res.status >= 500, `delivery ${n}: ${res.status} ${JSON.stringify(body)}`);
          } catch (err) {
            if (err instanceof assert.AssertionError) throw err;
            // connection refused or reset: the process was killed (the loop ends) or is overloaded
          }
          await sleep(200);
        }
      }
    }),
  );
  return accepted;
}
