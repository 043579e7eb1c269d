// The services' images (services/<svc>/Dockerfile), checked without a Docker engine: the pruning
// and assembling the Dockerfiles run (deploy/docker/production-tree.mjs, the same script) is run
// here for real with the repository's turbo, and the Dockerfiles are parsed for what their final
// stage promises. What only a real build shows (that npm ci and tsc succeed in the image, and what
// the image then holds and does) is deploy/test/containers.test.ts's, with podman or a Docker engine.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { REPO, SERVICES, defaultPort, productionWorkspaces, type ServiceName } from './k8s-support/repo.ts';
import { renderDockerfile } from '../docker/dockerfiles.ts';

const run = promisify(execFile);
const TREE_SCRIPT = path.join(REPO, 'deploy/docker/production-tree.mjs');
const TURBO = path.join(REPO, 'node_modules/.bin/turbo');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/** A Dockerfile as stages of instructions: continuation lines joined, comments and blank lines dropped. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    const op = m[1]!.toUpperCase();
    const rest = m[2]!.replace(/\s+/g, ' ').trim();
    if (op === 'FROM') {
      const f = /^(\S+)(?: AS (\S+))?$/i.exec(rest);
      assert.ok(f, `FROM ${rest}`);
      stages.push({ name: f[2] ?? String(stages.length), from: f[1]!, instructions: [] });
    } else if (stages.length === 0) {
      if (op === 'ARG') {
        const [k, v = ''] = rest.split('=');
        args.set(k!, v);
      }
    } else stages.at(-1)!.instructions.push({ op, args: rest });
  }
  return { args, stages };
}

const listWorkspaces = (jsonDir: string): string[] => {
  const lock = JSON.parse(readFileSync(path.join(jsonDir, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  return Object.keys(lock.packages)
    .filter((k) => k !== '' && !k.split('/').includes('node_modules'))
    .sort();
};

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: false })
    .map(String)
    .filter((f) => statSync(path.join(dir, f)).isFile());

const work = mkdtempSync(path.join(tmpdir(), 'flowdesk-images-'));
/** The shared build tree of the six services (what the Dockerfiles' common build stage compiles). */
const buildTree = path.join(work, 'build');
/** One service's runtime tree (what its image installs and runs). */
const runtimeTree = (svc: ServiceName) => path.join(work, 'runtime', svc);

before(async () => {
  // What every Dockerfile's prune stage runs: all six services at once.
  await run(process.execPath, [TREE_SCRIPT, 'prune-all', REPO, work, ...SERVICES.map((s) => `@flowdesk/${s}`)], {
    env: { ...process.env, TURBO_BIN: TURBO, TURBO_TELEMETRY_DISABLED: '1' },
  });
});
after(() => rmSync(work, { recursive: true, force: true }));

test('.dockerignore keeps installed packages, build output, generated code and local data out of the context', () => {
  const ignore = readFileSync(path.join(REPO, '.dockerignore'), 'utf8')
    .split(/\r?\n/)
    .map((l) => l.trim());
  for (const pattern of ['**/node_modules', '**/dist', '**/src/generated', '.git', '.flowdesk'])
    assert.ok(ignore.includes(pattern), `.dockerignore lacks ${pattern}`);
});

test('every Dockerfile is the one deploy/docker/Dockerfile.template renders (npm run gen:dockerfiles)', () => {
  for (const svc of SERVICES) {
    const committed = readFileSync(path.join(REPO, 'services', svc, 'Dockerfile'), 'utf8');
    assert.equal(committed, renderDockerfile(svc), `services/${svc}/Dockerfile is stale: run npm run gen:dockerfiles`);
  }
});

test('the prune and build stages are the same in all six Dockerfiles, so six builds compile once (shared layers)', () => {
  const shared = (svc: ServiceName) =>
    parseDockerfile(readFileSync(path.join(REPO, 'services', svc, 'Dockerfile'), 'utf8'))
      .stages.filter((s) => s.name === 'prune' || s.name === 'build')
      .map((s) => JSON.stringify(s));
  const first = shared(SERVICES[0]);
  assert.equal(first.length, 2);
  for (const svc of SERVICES.slice(1)) assert.deepEqual(shared(svc), first, `services/${svc}/Dockerfile's prune/build stages differ from ${SERVICES[0]}'s`);
});

test('the shared build tree: every service and what it needs to compile, but not embedded/ or deploy/', () => {
  const workspaces = listWorkspaces(path.join(buildTree, 'json'));
  for (const svc of SERVICES) for (const dir of productionWorkspaces(`@flowdesk/${svc}`)) assert.ok(workspaces.includes(dir), `build tree lacks ${dir}`);
  assert.ok(!workspaces.includes('embedded') && !workspaces.includes('deploy'), workspaces.join(', '));
});

for (const svc of SERVICES) {
  describe(`${svc} image`, () => {
    const dockerfile = readFileSync(path.join(REPO, 'services', svc, 'Dockerfile'), 'utf8');
    const { args, stages } = parseDockerfile(dockerfile);
    const stage = (name: string) => {
      const s = stages.find((x) => x.name === name);
      assert.ok(s, `stage ${name} missing`);
      return s;
    };
    const runtime = stages.at(-1)!;
    const port = defaultPort(svc);
    const production = productionWorkspaces(`@flowdesk/${svc}`);

    test('runtime tree: exactly the service and the workspaces it needs at run time, production packages only', () => {
      const out = runtimeTree(svc);
      const workspaces = listWorkspaces(path.join(out, 'json'));
      assert.deepEqual(workspaces, production);
      assert.ok(workspaces.includes(`services/${svc}`));
      for (const other of SERVICES.filter((s) => s !== svc)) assert.ok(!workspaces.includes(`services/${other}`), `runtime tree carries services/${other}`);
      assert.ok(!existsSync(path.join(out, 'json/embedded')) && !existsSync(path.join(out, 'json/deploy')));
      const lock = JSON.parse(readFileSync(path.join(out, 'json/package-lock.json'), 'utf8')) as {
        packages: Record<string, { dev?: boolean; devDependencies?: object }>;
      };
      // Build and test tools must not be installable from the runtime lockfile at all. (@types/node
      // may be: @types/pg is a dependency of a Prisma adapter, and it depends on @types/node.)
      const packages = Object.keys(lock.packages);
      for (const tool of ['typescript', 'turbo', 'tsx', 'prisma', '@prisma/engines', 'testcontainers', 'playwright-core', 'autocannon'])
        assert.ok(!packages.includes(`node_modules/${tool}`), `runtime lockfile holds ${tool}`);
      for (const [key, entry] of Object.entries(lock.packages))
        assert.equal(entry.devDependencies, undefined, `${key || 'root'} still declares devDependencies`);
      // package.json files and lockfile agree, so npm ci accepts them.
      for (const dir of ['', ...workspaces]) {
        const pkg = JSON.parse(readFileSync(path.join(out, 'json', dir, 'package.json'), 'utf8')) as {
          dependencies?: object;
          devDependencies?: object;
        };
        assert.equal(pkg.devDependencies, undefined);
        assert.deepEqual(
          (lock.packages[dir] as { dependencies?: object }).dependencies ?? {},
          pkg.dependencies ?? {},
          `${dir || 'root'}: lockfile and package.json disagree`,
        );
      }
    });

    test('files the build needs from outside the pruned tree are copied in by the build stage', () => {
      const full = path.join(buildTree, 'full');
      const copied = stage('build')
        .instructions.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
        .map((i) => path.normalize(i.args.split(' ')[0]!));
      const available = (repoRelative: string) => existsSync(path.join(full, repoRelative)) || copied.includes(path.normalize(repoRelative));
      for (const dir of listWorkspaces(path.join(buildTree, 'json'))) {
        for (const file of readdirSync(path.join(full, dir)).filter((f) => /^tsconfig.*\.json$/.test(f))) {
          const ext = (JSON.parse(readFileSync(path.join(full, dir, file), 'utf8')) as { extends?: string }).extends;
          if (ext?.startsWith('.')) assert.ok(available(path.join(dir, ext)), `${dir}/${file} extends ${ext}, which the image does not have`);
        }
        const scripts = (JSON.parse(readFileSync(path.join(full, dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
        for (const script of Object.values(scripts))
          for (const m of script.matchAll(/\bnode (\.{1,2}\/\S+\.m?js)/g))
            assert.ok(available(path.join(dir, m[1]!)), `${dir}: "${script}" needs ${m[1]}, which the image does not have`);
      }
    });

    test('runtime assets: dist and SQL migrations of the runtime tree only', async (t) => {
      const out = runtimeTree(svc);
      const missing = production.filter((dir) => !existsSync(path.join(REPO, dir, 'dist')));
      if (missing.length > 0) {
        t.skip(`not built here (${missing.join(', ')}): run \`npx turbo run build --filter=@flowdesk/${svc}\` to check the assembled image tree`);
        return;
      }
      const app = path.join(out, 'app');
      await run(process.execPath, [TREE_SCRIPT, 'assemble', path.join(out, 'json'), REPO, app]);
      const files = filesUnder(app);
      for (const f of files) {
        assert.ok(
          production.some((dir) => f.startsWith(`${dir}/`)),
          `${f} is outside the runtime workspaces`,
        );
        assert.match(f, /^[^/]+\/[^/]+\/(dist|migrations|prisma\/migrations)\//, `${f} is neither build output nor a migration`);
      }
      assert.ok(files.includes(`services/${svc}/dist/main.js`));
      if (existsSync(path.join(REPO, 'services', svc, 'prisma/migrations')))
        assert.ok(
          files.some((f) => f.startsWith(`services/${svc}/prisma/migrations/`) && f.endsWith('migration.sql')),
          'migrations missing',
        );
      if (production.includes('libs/bus'))
        assert.ok(
          files.some((f) => f.startsWith('libs/bus/migrations/')),
          'bus migrations missing',
        );
    });

    test('Dockerfile: node:22-bookworm-slim, prune → build → deps → runtime', () => {
      assert.equal(args.get('NODE_IMAGE'), 'node:22-bookworm-slim');
      for (const s of stages) assert.equal(s.from, '${NODE_IMAGE}', `stage ${s.name} is not on the pinned base image`);
      assert.deepEqual(
        stages.map((s) => s.name),
        ['prune', 'build', 'deps', 'runtime'],
      );
      const runs = (name: string) =>
        stage(name)
          .instructions.filter((i) => i.op === 'RUN')
          .map((i) => i.args);
      assert.ok(
        runs('prune').some((r) => r.includes(`production-tree.mjs prune-all /repo /prune ${SERVICES.map((s) => `@flowdesk/${s}`).join(' ')}`)),
        'prune stage does not prune the six services',
      );
      // The same turbo as the repository's, so the image prunes exactly what this test pruned.
      const turbo = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.turbo;
      assert.ok(
        runs('prune').some((r) => r.includes(`turbo@${turbo}`)),
        `prune stage does not install turbo@${turbo}`,
      );
      assert.ok(runs('build').some((r) => r.includes(`turbo run build`) && r.includes(`--filter=@flowdesk/${svc}`)));
      assert.ok(
        runs('build').some((r) => r.split(/[ ;]+/).includes(svc) && r.includes('production-tree.mjs assemble /prune/runtime/$s/json /repo /out/$s')),
        'the build stage does not assemble this service',
      );
      const depsInstall = runs('deps').find((r) => /\bnpm ci\b/.test(r));
      assert.ok(depsInstall?.includes('--omit=dev'), 'the runtime dependencies are not a production-only install');
      assert.ok(
        stage('deps').instructions.some((i) => i.op === 'COPY' && i.args === `--from=prune /prune/runtime/${svc}/json/ ./`),
        'deps stage installs from something else than the runtime tree',
      );
      const names = new Set(stages.map((s) => s.name));
      for (const s of stages)
        for (const i of s.instructions.filter((x) => x.op === 'COPY' && x.args.startsWith('--from=')))
          assert.ok(names.has(/^--from=(\S+)/.exec(i.args)![1]!), `COPY ${i.args}: unknown stage`);
    });

    test('final stage: only the production install and the assembled output, non-root, health check, node dist/main.js', () => {
      const ins = runtime.instructions;
      const copies = ins.filter((i) => i.op === 'COPY').map((i) => i.args.replace(/--chown=\S+ /, ''));
      assert.deepEqual(
        copies,
        ['--from=deps /app/ ./', `--from=build /out/${svc}/ ./`],
        'the final stage copies something else than node_modules + the assembled tree',
      );
      assert.ok(!ins.some((i) => i.op === 'RUN'), 'no RUN in the final stage: nothing is installed or built there');
      assert.ok(ins.some((i) => i.op === 'ENV' && /\bNODE_ENV=production\b/.test(i.args)));
      const user = ins.filter((i) => i.op === 'USER').at(-1)?.args;
      assert.ok(user, 'no USER');
      assert.ok(!/^(root|0)(:|$)/.test(user), `runs as ${user}`);
      assert.match(user, /^\d+(:\d+)?$/, 'USER should be numeric so Kubernetes runAsNonRoot can verify it');
      assert.equal(ins.find((i) => i.op === 'EXPOSE')?.args, String(port), `EXPOSE differs from main.ts's default port ${port}`);
      const workdir = ins.filter((i) => i.op === 'WORKDIR').at(-1)?.args;
      const cmd = JSON.parse(ins.find((i) => i.op === 'CMD')!.args) as string[];
      assert.equal(path.posix.join(workdir ?? '/', ...cmd.slice(1)), `/app/services/${svc}/dist/main.js`);
      assert.equal(cmd[0], 'node');
      const health = ins.find((i) => i.op === 'HEALTHCHECK')?.args;
      assert.ok(health, 'no HEALTHCHECK');
      const healthCmd = JSON.parse(health.slice(health.indexOf('CMD ') + 4)) as string[];
      assert.equal(healthCmd[0], 'node', 'slim images have no curl: the health check must use node');
      assert.ok(healthCmd.join(' ').includes('/healthz') && healthCmd.join(' ').includes(String(port)));
    });
  });
}
