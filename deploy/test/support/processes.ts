// Starting the compiled entrypoints (services/<svc>/dist/{main,migrate}.js) as child processes, the
// way their container images run them: `node dist/main.js`, configuration from the environment,
// no tsx, no source condition. dist/ comes from `npx turbo run build` (deploy's test task depends on
// ^build); nothing here builds.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceName } from '../k8s-support/repo.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export type { ServiceName };

export function entrypoint(service: ServiceName, file: 'main.js' | 'migrate.js'): string {
  const p = path.join(REPO_ROOT, 'services', service, 'dist', file);
  if (!existsSync(p)) throw new Error(`${p} does not exist: run \`npx turbo run build\` at the repository root first`);
  return p;
}

/** A free loopback port (the services need theirs before they start: PUBLIC_BASE_URL names it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * The environment a child gets: only what is given plus PATH/HOME-like basics, so nothing of the
 * test runner's (DATABASE_URL of another database, NODE_OPTIONS with tsx, a developer's KAFKA_BROKERS)
 * leaks into "production configuration".
 */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'SYSTEMROOT'];
  const base = Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
  // Every process its own metrics port (0: any free one): in Kubernetes each pod has 9464 to itself,
  // here several services share one host and the second to bind 9464 exited with EADDRINUSE.
  return { ...base, METRICS_PORT: '0', ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When the process ended (Date.now()). */
  at: number;
}

export interface ServiceProcess {
  name: string;
  url: string;
  child: ChildProcess;
  /** Every stdout line so far (pino JSON when all is well). */
  stdout: string[];
  stderr: string[];
  exited: Promise<Exit>;
  /** Sends `signal` and waits for the exit; returns it with how long it took. */
  stop(signal?: NodeJS.Signals): Promise<Exit & { ms: number }>;
}

function lines(stream: NodeJS.ReadableStream | null, into: string[], echo: boolean, name: string): void {
  let rest = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    rest += chunk;
    let i: number;
    while ((i = rest.indexOf('\n')) !== -1) {
      const line = rest.slice(0, i);
      rest = rest.slice(i + 1);
      into.push(line);
      if (echo) process.stderr.write(`[${name}] ${line}\n`);
    }
  });
  stream?.on('end', () => {
    if (rest) into.push(rest);
  });
}

const ECHO = process.env.FLOWDESK_TEST_ECHO === '1';

/** Starts `node <script>` with exactly `env` (plus PATH/HOME); its output is collected line by line. */
export function spawnNode(name: string, script: string, env: Record<string, string | undefined>, url = ''): ServiceProcess {
  return spawnCommand(name, process.execPath, [script], env, url);
}

/**
 * Starts `command args` with exactly `env` (plus PATH/HOME); its output is collected line by line.
 * `stop` sends the signal to that process, or calls `options.signal` (e.g. a container engine's kill).
 */
export function spawnCommand(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  url = '',
  options: { signal?: (signal: NodeJS.Signals) => void } = {},
): ServiceProcess {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  lines(child.stdout, stdout, ECHO, name);
  lines(child.stderr, stderr, ECHO, name);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
  return {
    name,
    url,
    child,
    stdout,
    stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      const sent = Date.now();
      if (child.exitCode === null && child.signalCode === null) {
        if (options.signal) options.signal(signal);
        else child.kill(signal);
      }
      const exit = await exited;
      return { ...exit, ms: exit.at - sent };
    },
  };
}

/** Runs a migration entrypoint to its end. */
export async function runMigrate(
  service: ServiceName,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string[]; stderr: string[] }> {
  const p = spawnNode(`${service}/migrate`, entrypoint(service, 'migrate.js'), env);
  const exit = await p.exited;
  // The 'exit' event can precede the last 'data' of the pipes.
  await new Promise((r) => setImmediate(r));
  return { code: exit.code, stdout: p.stdout, stderr: p.stderr };
}

/**
 * Starts a service's dist/main.js on `port` and waits for its /readyz 200 (or its early death). The
 * 180 s ceiling: on a two-core machine at load average 40 (other suites running), one migrate
 * entrypoint took 20 s and workspace-api alone 26 s to be ready; six starting at once took over 90 s.
 */
export async function startService(service: ServiceName, port: number, env: Record<string, string | undefined>, timeoutMs = 180_000): Promise<ServiceProcess> {
  const url = `http://127.0.0.1:${port}`;
  const p = spawnNode(service, entrypoint(service, 'main.js'), { ...env, PORT: String(port), HOST: '127.0.0.1' }, url);
  await waitReady(p, timeoutMs);
  return p;
}

export async function waitReady(p: ServiceProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let died: Exit | undefined;
  void p.exited.then((e) => (died = e));
  for (;;) {
    if (died) throw new Error(`${p.name} exited (${died.code ?? died.signal}) before it was ready:\n${[...p.stderr, ...p.stdout].slice(-20).join('\n')}`);
    try {
      const res = await fetch(`${p.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${p.name} not ready within ${timeoutMs} ms:\n${[...p.stderr, ...p.stdout].slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills what is still running (a failed test must not leave processes behind). */
export async function killAll(ps: Iterable<ServiceProcess | undefined>): Promise<void> {
  await Promise.all(
    [...ps].map(async (p) => {
      if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.child.kill('SIGKILL');
      await p.exited;
    }),
  );
}
