// npm run mutation [-- <module> ...] [--incremental] [--concurrency N]
// Runs StrykerJS (stryker.config.mjs) for each module, or those named, one after the other, and
// prints each module's mutation score and the total (docs/development.md, "Mutation testing"). Not
// part of `npm test` or CI: a full run takes tens of minutes on 2 cores.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MODULES } from '../stryker.config.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const valueOf = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const concurrency = valueOf('--concurrency') ?? process.env.MUTATION_CONCURRENCY ?? '1';
const names = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--concurrency');
const unknown = names.filter((n) => !MODULES.some((m) => m.name === n));
if (unknown.length > 0) {
  console.error(`unknown module(s) ${unknown.join(', ')}; the modules: ${MODULES.map((m) => m.name).join(', ')}`);
  process.exit(2);
}
const chosen = names.length > 0 ? names.map((n) => MODULES.find((m) => m.name === n)) : MODULES;

// A range whose first line no longer holds its anchor has moved: say so rather than mutate other code.
let drifted = false;
for (const m of chosen)
  for (const r of m.mutate) {
    const line = readFileSync(r.file, 'utf8').split('\n')[r.lines[0] - 1] ?? '';
    if (!line.includes(r.anchor)) {
      console.error(`${m.name}: ${r.file}:${r.lines[0]} no longer holds "${r.anchor}" (it reads "${line.trim()}"): update the range in stryker.config.mjs`);
      drifted = true;
    }
  }
if (drifted) process.exit(2);

const DETECTED = new Set(['Killed', 'Timeout']);
const COUNTED = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);
const rows = [];
const started = Date.now();
for (const m of chosen) {
  if (m.needs && !process.env[m.needs]) console.warn(`${m.name}: ${m.needs} is not set; its tests that need it are skipped, so their mutants survive`);
  const t = Date.now();
  const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs'], {
    stdio: 'inherit',
    env: { ...process.env, MUTATION_MODULE: m.name, MUTATION_CONCURRENCY: concurrency, MUTATION_INCREMENTAL: flag('--incremental') ? '1' : '0' },
  });
  if (run.status !== 0) {
    rows.push({ module: m.name, error: `stryker exited ${run.status}` });
    continue;
  }
  const report = JSON.parse(readFileSync(`reports/mutation/${m.name}.json`, 'utf8'));
  const mutants = Object.values(report.files).flatMap((f) => f.mutants);
  const detected = mutants.filter((x) => DETECTED.has(x.status)).length;
  const counted = mutants.filter((x) => COUNTED.has(x.status)).length;
  const survivors = mutants
    .filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')
    .map((x) => `${Object.keys(report.files).find((f) => report.files[f].mutants.includes(x))}:${x.location.start.line} ${x.mutatorName} → ${x.replacement}`);
  rows.push({ module: m.name, detected, counted, seconds: Math.round((Date.now() - t) / 1000), survivors });
}

console.log('\nmutation score per module (killed + timed out / all but errors):');
for (const r of rows) {
  if (r.error) console.log(`  ${r.module.padEnd(18)} ${r.error}`);
  else
    console.log(
      `  ${r.module.padEnd(18)} ${((100 * r.detected) / Math.max(1, r.counted)).toFixed(1).padStart(5)} %  ${r.detected}/${r.counted}  ${r.seconds} s`,
    );
  for (const s of r.survivors ?? []) console.log(`      survived: ${s}`);
}
const ok = rows.filter((r) => !r.error);
const detected = ok.reduce((s, r) => s + r.detected, 0);
const counted = ok.reduce((s, r) => s + r.counted, 0);
console.log(
  `  ${'total'.padEnd(18)} ${((100 * detected) / Math.max(1, counted)).toFixed(1).padStart(5)} %  ${detected}/${counted}  ${Math.round((Date.now() - started) / 1000)} s`,
);
process.exit(rows.some((r) => r.error) ? 1 : 0);
