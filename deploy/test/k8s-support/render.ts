import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { REPO } from './repo.ts';

/** A rendered Kubernetes object, loosely typed: the tests walk it like JSON. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export const K8S_DIR = path.join(REPO, 'deploy/k8s');

/**
 * Whether kubectl (with its built-in kustomize) can render here. Missing in CI is a failure the
 * message explains; missing on a laptop is a skip, so the rest of the suite stays usable.
 */
export function kubectlProblem(): string | undefined {
  const r = spawnSync('kubectl', ['version', '--client', '--output=json'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    return 'kubectl is not on PATH (or does not run): install kubectl (it bundles kustomize; the development image has it at /usr/bin/kubectl) so `kubectl kustomize` can render deploy/k8s';
  }
  return undefined;
}

export const run = promisify(execFile);

/** `kubectl kustomize <dir>` (offline) parsed into objects. */
export async function render(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', path.join(K8S_DIR, dir)], { maxBuffer: 32 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${dir}: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** kubernetes' label selector semantics (matchLabels AND matchExpressions); `{}` selects everything. */
export function selects(
  selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    const ok =
      e.operator === 'In'
        ? has && (e.values ?? []).includes(value!)
        : e.operator === 'NotIn'
          ? !has || !(e.values ?? []).includes(value!)
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}
