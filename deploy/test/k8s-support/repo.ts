import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Helpers shared by images.test.ts and manifests.test.ts: the repository as the source of truth. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export const SERVICES = ['workspace-api', 'auth', 'mcp-gateway', 'webhook-ingest', 'workflow-engine', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Services that own a Postgres schema and ship `node services/<svc>/dist/migrate.js`. */
export const MIGRATING_SERVICES = ['workspace-api', 'auth', 'mcp-gateway', 'workflow-engine'] as const;

/**
 * The port a service listens on when PORT is unset, read from its own code (main.ts, or config.ts
 * where main.ts delegates), so the Dockerfile's EXPOSE and the manifests cannot drift from it.
 */
export function defaultPort(service: ServiceName): number {
  const src = path.join(REPO, 'services', service, 'src');
  for (const file of ['main.ts', 'config.ts']) {
    let text: string;
    try {
      text = readFileSync(path.join(src, file), 'utf8');
    } catch {
      continue;
    }
    const m = /\bPORT\s*(?:\?\?|\|\|)\s*(\d+)/.exec(text);
    if (m) return Number(m[1]);
  }
  throw new Error(`no default PORT found in services/${service}/src/main.ts or config.ts`);
}

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const workspaceDirByName = (): Map<string, string> => {
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { name?: string }> };
  const map = new Map<string, string>();
  for (const dir of Object.keys(lock.packages)) {
    if (dir === '' || dir.split('/').includes('node_modules')) continue;
    const pkg = JSON.parse(readFileSync(path.join(REPO, dir, 'package.json'), 'utf8')) as PackageJson;
    map.set(pkg.name, dir);
  }
  return map;
};

/**
 * The workspace folders a package needs at run time: itself and, transitively, every workspace in
 * its `dependencies` (never devDependencies), from the repository's package.json files.
 */
export function productionWorkspaces(pkgName: string): string[] {
  const dirs = workspaceDirByName();
  const seen = new Set<string>();
  const visit = (name: string) => {
    const dir = dirs.get(name);
    if (!dir || seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(REPO, dir, 'package.json'), 'utf8')) as PackageJson;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep);
  };
  visit(pkgName);
  return [...seen].sort();
}
