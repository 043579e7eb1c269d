// bench:start (issue 40: warm start ≤ 5 s, first start on a fresh checkout ≤ 30 s). Times `npm start`
// as a person runs it — npm, its `prestart` (generated clients, made again only when a schema changed),
// the embedded start on PGlite — from the command's spawn until /healthz answers and the banner is
// printed, and reads the banner's own figure ("Started in X s": process start to every service
// answering). Then SIGTERM, and the next start.
//   first  a `git clone` of this checkout's HEAD into a temporary folder, `npm ci` there (timed apart,
//          not counted: it is the install), then its first `npm start` (clients generated, a new
//          database created and migrated) — skipped with --no-fresh
//   warm   --runs starts (default 3) in this checkout on one FLOWDESK_HOME kept across them: the first
//          makes the database (not counted), the others find it; the median is the figure.
//
//   npm run bench:start -- [--runs 3] [--no-fresh]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, pct, REPO } from './flowdesk-child.ts';
import { sleep } from './stack.ts';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, 'no-fresh': { type: 'boolean', default: false } },
});
const RUNS = Number(args.runs);
if (!(RUNS >= 1)) throw new Error('--runs must be ≥ 1');

interface Start {
  wallMs: number;
  bannerMs?: number;
}

/** One `npm start` in `cwd` until it answers and prints its banner; then stopped. */
async function timeStart(cwd: string, home: string): Promise<Start> {
  const port = await freePort();
  const t0 = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, FLOWDESK_HOME: home, PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'error' };
  delete env.DATABASE_URL; // PGlite, as a first `npm start` runs
  const child = spawn('npm', ['start'], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`npm start exited before it answered:\n${output}`);
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up && /Flowdesk is running/.test(output)) break;
      if (performance.now() - t0 > 300_000) throw new Error(`npm start did not answer in 300 s:\n${output}`);
      await sleep(50);
    }
    const wallMs = performance.now() - t0;
    const banner = /Started in ([\d.]+) s/.exec(output);
    return { wallMs, ...(banner ? { bannerMs: Number(banner[1]) * 1000 } : {}) };
  } finally {
    if (!exited) {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

const s = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);
console.log(`bench:start: npm start on PGlite; load average ${loadavg()[0]!.toFixed(2)} (2 cores)`);

if (!args['no-fresh']) {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-fresh-'));
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO }).toString().trim();
    execFileSync('git', ['clone', '-q', REPO, dir]);
    const i0 = performance.now();
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
    const installMs = performance.now() - i0;
    const first = await timeStart(dir, path.join(dir, '.flowdesk'));
    console.log(
      `  first start on a fresh checkout (${head}; npm ci before it took ${s(installMs)}, not counted): ${s(first.wallMs)} (banner: ${s(first.bannerMs)})  target ≤ 30 s: ${first.wallMs <= 30_000 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-warm-'));
try {
  await timeStart(REPO, home); // makes the database: not counted
  const warm: Start[] = [];
  for (let i = 0; i < RUNS; i++) warm.push(await timeStart(REPO, home));
  const walls = warm.map((w) => w.wallMs);
  const banners = warm.flatMap((w) => (w.bannerMs === undefined ? [] : [w.bannerMs]));
  console.log(
    `  warm start (${RUNS} runs, median): ${s(pct(walls, 50))} from the command (min ${s(Math.min(...walls))}, max ${s(Math.max(...walls))}); banner ${s(pct(banners, 50))}  target ≤ 5 s: ${pct(walls, 50) <= 5_000 ? 'met' : 'NOT met'}`,
  );
} finally {
  await rm(home, { recursive: true, force: true });
}
