#!/usr/bin/env node
// `npm test`'s runner (after `turbo run typecheck` and the services' build that deploy/ tests use):
// every workspace's `test` script, two at a time, the longest first, so the machine's two cores stay
// busy to the end. turbo ran them in its graph order, which put the longest package (embedded, that
// depends on every other) last, alone on one core for a quarter of the run (docs/development.md,
// "CI"). The embedded package's browser files are a unit of their own beside its other files.
//
//   node scripts/run-tests.mjs [--concurrency N] [--list] [workspace-name ...]
//     --list  print each unit and its command, run nothing
//
// Output: every line prefixed `<package>:test: ` as turbo did (.ci/run counts on that), then one line
// per unit with its result and duration. Every unit runs even when one fails; the exit code is 1 if
// any failed.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  options: { concurrency: { type: 'string', default: '2' }, list: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const concurrency = Math.max(1, Number(values.concurrency) || 2);

// Seconds per unit, measured (2026-11-28, PGlite pass, a loaded 2-core VM): only their order matters.
// A unit not listed counts as 60 s.
const weight = {
  '@flowdesk/embedded (browser)': 1000,
  '@flowdesk/embedded': 800,
  '@flowdesk/deploy': 700,
  '@flowdesk/mcp-gateway': 580,
  '@flowdesk/workflow-engine': 480,
  '@flowdesk/workspace-api': 290,
  '@flowdesk/bus': 280,
  '@flowdesk/auth': 230,
  '@flowdesk/console': 170,
  '@flowdesk/service-kit': 75,
  '@flowdesk/webhook-ingest': 30,
  '@flowdesk/db': 20,
  '@flowdesk/contracts': 15,
};
// Packages whose test files are split into units: [unit suffix, which files].
const splits = { '@flowdesk/embedded': [['browser', (f) => f.startsWith('console-')]] };

// CI runs `npm test` twice, on PGlite and on Postgres (.ci/run sets FLOWDESK_CI_PASS to `pglite` or
// `postgres`). Suites whose subject is not the database run in one of the two passes only
// (docs/development.md, "CI"); without FLOWDESK_CI_PASS (a developer's `npm test`) every file runs.
// [unit label, the pass that runs it, which of its files the other pass still runs, why].
const oncePerCi = [
  [
    '@flowdesk/deploy',
    'postgres',
    () => false,
    'its tests run the services from dist/ on the machine Postgres in either pass (the Kafka and container suites already ran only there)',
  ],
  [
    '@flowdesk/embedded (browser)',
    'postgres',
    (f) => f === 'console-browser.test.ts',
    'the console is the same page on either database; console-browser.test.ts (a fresh start as `npm start` gives it) runs in both',
  ],
];
const ciPass = process.env.FLOWDESK_CI_PASS || undefined;
if (ciPass !== undefined && ciPass !== 'pglite' && ciPass !== 'postgres') throw new Error(`FLOWDESK_CI_PASS must be pglite or postgres, not ${ciPass}`);

const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const dirs = rootManifest.workspaces.flatMap((w) =>
  w.endsWith('/*')
    ? readdirSync(path.join(root, w.slice(0, -2)), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => path.join(w.slice(0, -2), d.name))
    : [w],
);

const units = [];
for (const dir of dirs) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8'));
  } catch {
    continue;
  }
  const script = manifest.scripts?.test;
  if (!script || (positionals.length > 0 && !positionals.includes(manifest.name))) continue;
  const split = splits[manifest.name];
  const files = / test\/\*\.test\.ts$/.test(script) ? readdirSync(path.join(root, dir, 'test')).filter((f) => f.endsWith('.test.ts')) : [];
  if (!split) {
    units.push({ name: manifest.name, label: manifest.name, dir, script, files, base: script });
    continue;
  }
  // The script ends with its file glob (test/*.test.ts): each unit names its files instead.
  if (files.length === 0) throw new Error(`${manifest.name}: its test script must end with test/*.test.ts to be split`);
  const taken = new Set();
  for (const [suffix, pick] of split) {
    const mine = files.filter((f) => pick(f) && !taken.has(f));
    mine.forEach((f) => taken.add(f));
    if (mine.length > 0)
      units.push({ name: manifest.name, label: `${manifest.name} (${suffix})`, dir, script: withFiles(script, mine), files: mine, base: script });
  }
  const rest = files.filter((f) => !taken.has(f));
  if (rest.length > 0) units.push({ name: manifest.name, label: manifest.name, dir, script: withFiles(script, rest), files: rest, base: script });
}
for (const [label, pass, keep, why] of ciPass ? oncePerCi : []) {
  const at = units.findIndex((u) => u.label === label);
  if (at < 0 || pass === ciPass) continue;
  const unit = units[at];
  const files = unit.files.filter(keep);
  console.log(`run-tests: ${label}: ${files.length > 0 ? `only ${files.join(', ')} in` : 'none in'} the ${ciPass} pass, the rest in the ${pass} pass: ${why}`);
  if (files.length > 0) units[at] = { ...unit, files, script: withFiles(unit.base, files) };
  else units.splice(at, 1);
}
units.sort((a, b) => (weight[b.label] ?? 60) - (weight[a.label] ?? 60));

function withFiles(script, files) {
  return script.replace(/ test\/\*\.test\.ts$/, ' ' + files.map((f) => `test/${f}`).join(' '));
}

function run(unit) {
  return new Promise((resolve) => {
    const started = Date.now();
    const bins = [path.join(root, unit.dir, 'node_modules/.bin'), path.join(root, 'node_modules/.bin')];
    const child = spawn('sh', ['-c', unit.script], {
      cwd: path.join(root, unit.dir),
      env: { ...process.env, PATH: [...bins, process.env.PATH].join(path.delimiter) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `${unit.name}:test: `;
    for (const [stream, out] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop();
        if (lines.length > 0) out.write(lines.map((l) => prefix + l + '\n').join(''));
      });
      stream.on('end', () => partial && out.write(prefix + partial + '\n'));
    }
    child.on('close', (code, signal) => resolve({ unit, ok: code === 0, code: code ?? signal, seconds: Math.round((Date.now() - started) / 1000) }));
  });
}

if (values.list) {
  for (const u of units) console.log(`run-tests: unit ${u.label} (${u.dir}): ${u.script}`);
  process.exit(0);
}

const started = Date.now();
const results = [];
const queue = [...units];
console.log(`run-tests: ${units.length} units, ${concurrency} at a time: ${units.map((u) => u.label).join(', ')}`);
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    for (let unit = queue.shift(); unit; unit = queue.shift()) {
      console.log(`run-tests: ${unit.label} started`);
      const result = await run(unit);
      results.push(result);
      console.log(`run-tests: ${unit.label} ${result.ok ? 'passed' : `FAILED (exit ${result.code})`} in ${result.seconds} s`);
    }
  }),
);
const failed = results.filter((r) => !r.ok);
console.log(`run-tests: ${results.length - failed.length} of ${results.length} units passed in ${Math.round((Date.now() - started) / 1000)} s`);
for (const r of results.sort((a, b) => b.seconds - a.seconds))
  console.log(`run-tests:   ${String(r.seconds).padStart(5)} s  ${r.ok ? 'ok    ' : 'FAILED'}  ${r.unit.label}`);
process.exit(failed.length > 0 ? 1 : 0);
