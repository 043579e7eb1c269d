#!/usr/bin/env node
// Helpers of the services' Dockerfiles (services/<svc>/Dockerfile), kept in one place so the five
// images are put together the same way and deploy/test/images.test.ts can run exactly this code.
//
//   node production-tree.mjs prune <package> <repo> <out-dir>
//     Two pruned trees of <package> (turbo prune --docker): <out-dir>/build, what building it needs
//     (devDependencies included), and <out-dir>/runtime, the build tree pruned again after strip-dev.
//     The turbo binary is `turbo` on PATH, or TURBO_BIN.
//
//   node production-tree.mjs prune-all <repo> <out-dir> <package>...
//     The same for several packages at once, as the Dockerfiles use it (one shared build of all six
//     services): <out-dir>/build, the build tree of all of them together, and
//     <out-dir>/runtime/<name>/ (name: the package without its scope), each one's runtime tree.
//
//   node production-tree.mjs strip-dev <repo>
//     Deletes every devDependencies block from the root and workspace package.json files and from the
//     matching entries of package-lock.json, in place. `turbo prune` follows devDependencies, so a
//     pruned tree of the gateway holds @flowdesk/auth and @flowdesk/workspace-api (its tests use them);
//     pruning again after this step gives the runtime tree: the service, the workspaces it needs to
//     run, and a lockfile with only their production packages. package.json and lockfile change
//     together, so `npm ci` still finds them in sync.
//
//   node production-tree.mjs assemble <runtime-json-dir> <built-repo> <out-dir>
//     Copies, for every workspace of the runtime tree, what the process reads at run time from the
//     built repository: dist/, and the SQL migrations the migrate entrypoints apply (prisma/migrations
//     of a service, migrations/ of libs/bus). Sources, tests and generated TypeScript stay behind.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a workspace needs at run time, relative to its folder. */
export const RUNTIME_ASSETS = ['dist', 'migrations', 'prisma/migrations'];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** Workspace folders of a tree, from its lockfile: the `packages` keys that are not under node_modules. */
export function workspaceDirs(root) {
  const lock = readJson(path.join(root, 'package-lock.json'));
  return Object.keys(lock.packages ?? {}).filter((k) => k !== '' && !k.split('/').includes('node_modules'));
}

export function stripDev(root) {
  const lockFile = path.join(root, 'package-lock.json');
  const lock = readJson(lockFile);
  for (const dir of ['', ...workspaceDirs(root)]) {
    const file = path.join(root, dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = readJson(file);
    delete pkg.devDependencies;
    writeJson(file, pkg);
    if (lock.packages?.[dir]) delete lock.packages[dir].devDependencies;
  }
  writeJson(lockFile, lock);
}

const turboPrune = (turbo, cwd, pkgs, out) =>
  execFileSync(turbo, ['prune', ...pkgs, '--docker', '--out-dir', out], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });

/**
 * turbo prune of `pkgs` together (the build tree), then, for each, a runtime tree pruned from a
 * devDependency-free copy of it; `runtimeOut(pkg)` names each runtime tree's folder.
 */
function pruneTrees(pkgs, repo, outDir, runtimeOut, turbo) {
  const build = path.resolve(outDir, 'build');
  const stripped = path.resolve(outDir, 'stripped');
  turboPrune(turbo, repo, pkgs, build);
  // The pruned full tree plus its lockfile is a repository of its own, small enough to copy and edit.
  cpSync(path.join(build, 'full'), stripped, { recursive: true });
  cpSync(path.join(build, 'package-lock.json'), path.join(stripped, 'package-lock.json'));
  stripDev(stripped);
  for (const pkg of pkgs) turboPrune(turbo, stripped, [pkg], runtimeOut(pkg));
  rmSync(stripped, { recursive: true, force: true });
}

/** turbo prune twice: the build tree, then the runtime tree from a devDependency-free copy of it. */
export function prune(pkg, repo, outDir, turbo = process.env.TURBO_BIN ?? 'turbo') {
  pruneTrees([pkg], repo, outDir, () => path.resolve(outDir, 'runtime'), turbo);
}

/** The build tree of several packages together and each one's runtime tree (runtime/<name>). */
export function pruneAll(pkgs, repo, outDir, turbo = process.env.TURBO_BIN ?? 'turbo') {
  pruneTrees(pkgs, repo, outDir, (pkg) => path.resolve(outDir, 'runtime', pkg.replace(/^@[^/]+\//, '')), turbo);
}

export function assemble(runtimeJsonDir, builtRoot, outDir) {
  const copied = [];
  for (const dir of workspaceDirs(runtimeJsonDir)) {
    const dist = path.join(builtRoot, dir, 'dist');
    // A workspace of the runtime tree without dist/ was not built: the image would fail at import.
    if (!existsSync(dist)) throw new Error(`${dir}/dist is missing: build ${dir} before assembling the image`);
    for (const asset of RUNTIME_ASSETS) {
      const from = path.join(builtRoot, dir, asset);
      if (!existsSync(from)) continue;
      const to = path.join(outDir, dir, asset);
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(from, to, { recursive: true });
      copied.push(path.join(dir, asset));
    }
  }
  return copied;
}

const [command, ...args] = process.argv.slice(2);
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (!isMain) {
  // imported: nothing to run
} else if (command === 'prune' && args.length === 3) prune(args[0], args[1], args[2]);
else if (command === 'prune-all' && args.length >= 3) pruneAll(args.slice(2), args[0], args[1]);
else if (command === 'strip-dev' && args.length === 1) stripDev(args[0]);
else if (command === 'assemble' && args.length === 3) console.log(assemble(args[0], args[1], args[2]).join('\n'));
else {
  console.error(
    'usage: production-tree.mjs prune <package> <repo> <out-dir> | prune-all <repo> <out-dir> <package>... | strip-dev <repo> | assemble <runtime-json-dir> <built-repo> <out-dir>',
  );
  process.exit(2);
}
