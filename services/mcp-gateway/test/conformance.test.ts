// The @modelcontextprotocol/conformance server suite against the gateway in conformance mode: the
// same Streamable HTTP route, sessions table and error handling as production, with the suite's
// fixtures instead of the Flowdesk catalogue. The CLI needs Node 22 (tools/node22), so it runs as a
// child process while the gateway runs in this process.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { migrateGateway } from '../src/adapters/db.ts';
import { CONFORMANCE_PRINCIPAL } from '../src/conformance/mode.ts';
import { MCP_PATH, standaloneGatewayDeps } from './helpers/stack.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../../..');
const NODE22 = path.join(REPO, 'tools/node22/node_modules/.bin/node');
const CLI = path.join(REPO, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const EXPECTED_FAILURES_FILE = path.join(HERE, 'conformance-expected-failures.json');
/** The revisions the gateway speaks; for each the CLI's filter keeps the scenarios that apply to it. */
const SPEC_VERSIONS = ['2025-06-18', '2025-11-25', '2026-07-28'] as const;
const SUITE = 'active';
/**
 * The revisions whose frozen requirement set (`--requirements`, the CLI's requirements/<revision>.yaml:
 * exactly what conformance to that revision requires, plus what it runs unscored) is checked too.
 */
const REQUIREMENTS = ['2025-11-25', '2026-07-28'] as const;

/** One CLI run: its arguments and where its expected failures are in conformance-expected-failures.json. */
type Run = { title: string; args: string[]; section: 'server' | 'requirements'; revision: string };
const RUNS: Run[] = [
  ...SPEC_VERSIONS.map((v) => ({ title: `suite ${SUITE}, spec ${v}`, args: ['--suite', SUITE, '--spec-version', v], section: 'server' as const, revision: v })),
  ...REQUIREMENTS.map((r) => ({ title: `requirements ${r}`, args: ['--requirements', r], section: 'requirements' as const, revision: r })),
];

type Check = {
  id: string;
  name: string;
  /** SUCCESS, FAILURE, WARNING, INFO, or a status a newer CLI adds. */ status: string;
  errorMessage?: string;
  description?: string;
};

const node22Missing = !existsSync(NODE22);
// Locally a missing binary is a setup step not yet taken; in CI it is a broken pipeline.
const skip = node22Missing && !process.env.CI ? `Node 22 binary not installed at tools/node22: run \`npm ci --prefix tools/node22\`` : false;

let database: TestDatabase;
let app: Service;
let url: string;

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  await migrateGateway(database.db);
  app = await buildApp(standaloneGatewayDeps(database.db, { conformanceMode: true }));
  url = `${await listen(app, 0, '127.0.0.1')}${MCP_PATH}`;
});
after(async () => {
  await app?.close();
  await database?.close();
});

const sessionRows = async () => {
  const { rows } = await database.db.exec(`SELECT count(*)::int AS n FROM "gateway"."mcp_session" WHERE "credential_id" = $1`, [
    CONFORMANCE_PRINCIPAL.credentialId,
  ]);
  return Number(rows[0]!.n);
};

/** Runs the CLI with Node 22; resolves with its exit code and output whatever the code. */
function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE22,
      [CLI, ...args],
      { cwd: REPO, timeout: 120_000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(Object.assign(new Error(err.message, { cause: err }), { stdout, stderr }));
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
  });
}

/** The CLI names each scenario's result directory `server-<scenario>-<ISO time with - for : and .>`. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

for (const RUN of RUNS)
  test(`conformance (${RUN.title}): every scenario passes but the listed expected failures, which still fail`, { skip, timeout: 300_000 }, async (t) => {
    assert.ok(!node22Missing, `Node 22 binary missing at ${NODE22} (CI must run \`npm ci --prefix tools/node22\`)`);
    assert.ok(existsSync(CLI), `conformance CLI missing at ${CLI}: @modelcontextprotocol/conformance is a devDependency of the gateway`);
    const expected = JSON.parse(await readFile(EXPECTED_FAILURES_FILE, 'utf8')) as Record<Run['section'], Record<string, Record<string, string>> | undefined>;
    const expectedFailures = expected[RUN.section]?.[RUN.revision] ?? {};
    for (const [scenario, reason] of Object.entries(expectedFailures)) assert.ok(reason.trim().length > 0, `expected failure ${scenario} needs a reason`);

    const out = await mkdtemp(path.join(tmpdir(), 'flowdesk-conformance-'));
    try {
      // The CLI checks the same baseline itself (scenario names only): a second opinion on the verdict.
      const baseline = path.join(out, 'expected-failures.yaml');
      const names = Object.keys(expectedFailures);
      await writeFile(baseline, names.length ? `server:\n${names.map((n) => `  - ${JSON.stringify(n)}`).join('\n')}\n` : 'server: []\n');
      const sessionsBefore = await sessionRows();
      const run = await runCli(['server', '--url', url, ...RUN.args, '--expected-failures', baseline, '-o', path.join(out, 'results')]);
      const transcript = `\n--- conformance stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;

      const announced = /Running (?:\w+ suite|requirements \S+) \((\d+) scenarios\)/.exec(run.stdout);
      assert.ok(announced, `the CLI did not start the suite${transcript}`);
      const suite = [...run.stdout.matchAll(/=== Running scenario: (\S+) ===/g)].map((m) => m[1]!);
      assert.equal(suite.length, Number(announced[1]), `scenarios run ≠ scenarios announced${transcript}`);
      t.diagnostic(`${suite.length} scenarios: ${suite.join(', ')}`);
      assert.ok(suite.includes('tools-list') && suite.includes('tools-call-with-progress'), `unexpected suite: ${suite.join(', ')}`);

      const results = new Map<string, Check[]>();
      for (const dir of await readdir(path.join(out, 'results'))) {
        const scenario = RESULT_DIR.exec(dir)?.[1];
        if (scenario) results.set(scenario, JSON.parse(await readFile(path.join(out, 'results', dir, 'checks.json'), 'utf8')) as Check[]);
      }
      assert.deepEqual([...results.keys()].sort(), [...suite].sort(), `every scenario of the suite leaves its checks${transcript}`);

      // As the CLI judges a baseline: a warning fails a scenario too.
      const failing = (checks: Check[]) => checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      const unexpected: string[] = [];
      const stale: string[] = [];
      for (const [scenario, checks] of results) {
        const bad = failing(checks);
        if (checks.length === 0) unexpected.push(`${scenario}: no checks recorded`);
        else if (bad.length > 0 && !(scenario in expectedFailures))
          unexpected.push(`${scenario}: ${bad.map((c) => `${c.name} ${c.status}: ${c.errorMessage ?? c.description ?? ''}`).join('; ')}`);
        else if (bad.length === 0 && scenario in expectedFailures) stale.push(`${scenario} passes now: remove it from conformance-expected-failures.json`);
      }
      for (const scenario of Object.keys(expectedFailures)) {
        if (!results.has(scenario)) stale.push(`${scenario} is not in the run (${RUN.title}) any more: remove it from conformance-expected-failures.json`);
      }
      assert.deepEqual(unexpected, [], `unexpected conformance failures`);
      assert.deepEqual(stale, [], `stale expected failures`);
      assert.equal(run.code, 0, `the CLI's own baseline check failed${transcript}`);

      // The 2026-07-28 scenarios never touch the sessions table.
      if (RUN.revision === '2026-07-28') assert.equal(await sessionRows(), sessionsBefore, 'the 2026-07-28 run wrote no session row');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
