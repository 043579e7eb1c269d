// Flowdesk as `npm start` runs it (the embedded stack: all services in one process) in a child
// process, with this process as the outside world: what bench:tenants and bench:vs-n8n share. PGlite
// in a fresh FLOWDESK_HOME, or Postgres when `env.DATABASE_URL` (or this process's) is set.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './stack.ts';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A free TCP port on loopback. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** The p-th percentile (nearest rank) of xs, NaN when empty. */
export const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

export interface FlowdeskChild {
  /** http://127.0.0.1:<port>, the front (console, API, webhooks). */
  base: string;
  home: string;
  child: ChildProcess;
  /** The demo account's write key (from dev.json). */
  demoKey: string;
  /** The last 4,000 characters of its standard output. */
  output(): string;
  exited(): boolean;
  /** Stops it (SIGTERM, waits for the exit) and removes its FLOWDESK_HOME. */
  close(): Promise<void>;
}

/** Starts `npm start`'s entry in a child process and waits until /healthz answers and the banner is printed. */
export async function startFlowdeskChild(options: { env?: Record<string, string | undefined>; startTimeoutMs?: number } = {}): Promise<FlowdeskChild> {
  const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--conditions=source', '--import', 'tsx', 'embedded/src/main.ts'],
    {
      // BENCH_FLOWDESK_REPO: another checkout's `npm start` (old beside new, bench:vs-n8n --sides flowdesk).
      cwd: process.env.BENCH_FLOWDESK_REPO ?? REPO,
      env: {
        ...process.env,
        FLOWDESK_HOME: home,
        PORT: String(port),
        METRICS_PORT: '0',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  let exited = false;
  let closing = false;
  child.once('exit', (code, signal) => {
    exited = true;
    if (!closing) console.error(`Flowdesk exited during the bench (${signal ?? code}): ${output}`);
  });
  const close = async () => {
    closing = true;
    if (!exited) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await rm(home, { recursive: true, force: true });
  };
  const startedAt = Date.now();
  const timeout = options.startTimeoutMs ?? 300_000;
  for (;;) {
    if (exited) throw new Error(`Flowdesk did not start: ${output}`);
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up && /Flowdesk is running|Console/.test(output)) break;
    if (Date.now() - startedAt > timeout) {
      await close();
      throw new Error(`Flowdesk did not start in ${timeout / 1000} s: ${output}`);
    }
    await sleep(250);
  }
  const dev = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')) as { writeKey: string };
  return { base, home, child, demoKey: dev.writeKey, output: () => output, exited: () => exited, close };
}

/**
 * Makes an account — the installation's owner by POST /api/v1/setup (the default), or another by
 * open sign-up (`via: 'signup'`, SIGNUP_MODE=open) — and returns a write API key of it.
 */
export async function ownerApiKey(base: string, owner: { name: string; email: string; password: string }, via: 'setup' | 'signup' = 'setup'): Promise<string> {
  const made = await fetch(`${base}/api/v1/${via}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify(owner),
  });
  if (made.status !== 201) throw new Error(`${via}: ${made.status} ${await made.text()}`);
  const cookie = made.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const session = (await (await fetch(`${base}/api/v1/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  const created = await fetch(`${base}/api/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, cookie, 'x-csrf-token': session.csrfToken },
    body: JSON.stringify({ name: 'bench', scope: 'write' }),
  });
  if (created.status !== 201) throw new Error(`api key: ${created.status} ${await created.text()}`);
  return ((await created.json()) as { secret: string }).secret;
}
