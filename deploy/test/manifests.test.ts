// deploy/k8s rendered with `kubectl kustomize` (base, overlays/dev, overlays/prod): every object
// validated against the Kubernetes OpenAPI schemas (kubernetes-models) or, for Strimzi's KafkaTopic,
// against deploy/k8s/schemas/kafkatopic-v1beta2.schema.json; then the properties a reviewer checks
// by hand, derived from the code where the code says it (ports, topics, public paths).
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { dlqTopicOf } from '@flowdesk/bus';
import {
  CREDENTIAL_REVOKED_TOPIC,
  ENTITY_CHANGED_TOPIC,
  OWNER_THROTTLE_TOPIC,
  TRIGGER_TOPIC,
  WEBHOOK_REPLY_TOPIC,
  WORKFLOW_CHANGED_TOPIC,
} from '@flowdesk/contracts';
import { MIGRATING_SERVICES, REPO, SERVICES, defaultPort, type ServiceName } from './k8s-support/repo.ts';
import { K8S_DIR, kubectlProblem, render, run, selects, type K8sObject } from './k8s-support/render.ts';

const TARGETS = ['base', 'overlays/dev', 'overlays/prod'] as const;
type Target = (typeof TARGETS)[number];

/** apiVersion/kind → validator. An object of any other kind fails the suite: add it here knowingly. */
const kafkaTopicSchema = JSON.parse(readFileSync(path.join(K8S_DIR, 'schemas/kafkatopic-v1beta2.schema.json'), 'utf8')) as object;
const validateKafkaTopic = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(kafkaTopicSchema);
const VALIDATORS: Record<string, (o: K8sObject) => void> = {
  'v1/ConfigMap': (o) => new ConfigMap(o).validate(),
  // kustomize folds long base64 values over several lines; the API server's decoder (Go's base64)
  // ignores those newlines, the schema's "byte" format does not: unfold first, as the server would.
  'v1/Secret': (o) => new Secret({ ...o, data: Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, v.replace(/[\r\n]/g, '')])) }).validate(),
  'v1/Service': (o) => new Service(o).validate(),
  'apps/v1/Deployment': (o) => new Deployment(o).validate(),
  'apps/v1/StatefulSet': (o) => new StatefulSet(o).validate(),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o).validate(),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o).validate(),
  'batch/v1/Job': (o) => new Job(o).validate(),
  'networking.k8s.io/v1/Ingress': (o) => new Ingress(o).validate(),
  'networking.k8s.io/v1/NetworkPolicy': (o) => new NetworkPolicy(o).validate(),
  'kafka.strimzi.io/v1beta2/KafkaTopic': (o) => {
    if (!validateKafkaTopic(o)) throw new Error(JSON.stringify(validateKafkaTopic.errors));
  },
};

/** Public prefixes of the embedded start that the Ingress leaves out on purpose (ingress.yaml says why). */
const NOT_PUBLIC_IN_CLUSTER: Record<string, string> = {};

const SIGNING_SECRET = 'flowdesk-internal-jwt-signing';
const WEBHOOK_KEY_SECRET = 'flowdesk-webhook-secret-key';
const CREDENTIALS_KEY_SECRET = 'flowdesk-credentials-key';
const SERVICE_CLIENTS_SECRET = 'flowdesk-service-clients';

const problem = kubectlProblem();
if (problem && process.env.CI) {
  test('kubectl is available', () => assert.fail(`${problem}. CI validates deploy/k8s with it.`));
}

const rendered = new Map<Target, K8sObject[]>();
const skip = problem && !process.env.CI ? `skipped: ${problem}` : problem ? 'kubectl missing (see the failure above)' : false;

/** A generated object's base name: kustomize appends -<hash> to generated ConfigMaps and Secrets. */
const baseName = (name: string, base: string) => name === base || new RegExp(`^${base}-[a-z0-9]{10}$`).test(name);

/** The rendered objects are walked like JSON: their shapes are what the schemas above checked. */
type Json = any;

interface Workload {
  object: K8sObject;
  podLabels: Record<string, string>;
  pod: Json;
}

const workloads = (objects: K8sObject[]): Workload[] =>
  objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'Job')
    .map((o) => ({ object: o, podLabels: o.spec.template.metadata?.labels ?? {}, pod: o.spec.template.spec }));

const containersOf = (pod: Json): Json[] => [...(pod.initContainers ?? []), ...(pod.containers ?? [])];

/** Every Secret a pod can read: env, envFrom, volumes (also projected). */
function secretsReadBy(pod: Json): { name: string; key?: string }[] {
  const refs: { name: string; key?: string }[] = [];
  for (const c of containersOf(pod)) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) refs.push({ name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key });
    for (const e of c.envFrom ?? []) if (e.secretRef) refs.push({ name: e.secretRef.name });
  }
  for (const v of pod.volumes ?? []) {
    if (v.secret) refs.push({ name: v.secret.secretName });
    for (const s of v.projected?.sources ?? []) if (s.secret) refs.push({ name: s.secret.name });
  }
  return refs;
}

/** A service's workload: a Deployment, or webhook-ingest's StatefulSet (its pod index picks its reply partition). */
const STATEFUL = new Set(['webhook-ingest']);
const deployment = (objects: K8sObject[], svc: string): K8sObject => {
  const kind = STATEFUL.has(svc) ? 'StatefulSet' : 'Deployment';
  const d = objects.find((o) => o.kind === kind && o.metadata.name === svc);
  assert.ok(d, `no ${kind} ${svc}`);
  return d;
};
const container = (d: K8sObject): Json => d.spec.template.spec.containers.find((c: Json) => c.name === d.metadata.name) ?? d.spec.template.spec.containers[0];

/** An env var's value as the pod will see it: a literal, or resolved from a rendered ConfigMap. */
function envValue(objects: K8sObject[], c: Json, name: string): string | undefined {
  const e = (c.env ?? []).find((x: Json) => x.name === name);
  if (!e) return undefined;
  if (e.value !== undefined) return String(e.value);
  const ref = e.valueFrom?.configMapKeyRef;
  if (!ref) return undefined;
  return objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === ref.name)?.data?.[ref.key];
}

const portNumber = (c: Json, port: string | number): number => (typeof port === 'number' ? port : c.ports.find((p: Json) => p.name === port)?.containerPort);

before(async () => {
  if (problem) return;
  // The dev overlay's example Secrets come from files generated per checkout (never committed).
  await run(process.execPath, [path.join(K8S_DIR, 'overlays/dev/secrets/generate.mjs')]);
  const results = await Promise.all(TARGETS.map(async (t) => [t, await render(t)] as const));
  for (const [t, objects] of results) rendered.set(t, objects);
});

for (const target of TARGETS) {
  describe(`deploy/k8s/${target}`, { skip }, () => {
    const objects = () => rendered.get(target)!;

    test('every object is a known kind and valid against its schema', () => {
      assert.ok(objects().length > 0);
      for (const o of objects()) {
        const validate = VALIDATORS[`${o.apiVersion}/${o.kind}`];
        assert.ok(validate, `${o.apiVersion} ${o.kind} ${o.metadata?.name}: no schema to validate this kind against`);
        assert.doesNotThrow(() => validate(o), `${o.kind} ${o.metadata.name}`);
      }
    });

    for (const svc of SERVICES) {
      test(`${svc}: Deployment, Service, HPA and PDB that fit together`, () => {
        const d = deployment(objects(), svc);
        const labels = d.spec.template.metadata.labels;
        assert.ok(selects(d.spec.selector, labels));
        assert.equal(d.spec.replicas, undefined, 'replicas belong to the HPA: an apply would reset a scaled Deployment');
        const c = container(d);
        const port = defaultPort(svc);
        assert.ok(
          c.ports.some((p: Json) => p.containerPort === port),
          `container port is not ${port} (main.ts default)`,
        );

        const s = objects().find((o) => o.kind === 'Service' && o.metadata.name === svc);
        assert.ok(s, `no Service ${svc}`);
        assert.ok(selects({ matchLabels: s.spec.selector }, labels), 'Service selects other pods');
        // Besides the metrics port (METRICS_PORT's default, 9464: deploy/k8s/monitoring scrapes it).
        assert.ok(
          s.spec.ports.filter((p: Json) => p.name !== 'metrics').every((p: Json) => portNumber(c, p.targetPort ?? p.port) === port),
          'Service targets another port',
        );
        assert.equal(portNumber(c, s.spec.ports.find((p: Json) => p.name === 'metrics')?.targetPort), 9464, 'no metrics port on the Service');

        const hpa = objects().find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === svc);
        assert.ok(hpa, `no HPA for ${svc}`);
        assert.deepEqual([hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.apiVersion], [d.kind, 'apps/v1']);
        assert.ok(hpa.spec.minReplicas >= 1 && hpa.spec.maxReplicas >= hpa.spec.minReplicas);

        const pdb = objects().find((o) => o.kind === 'PodDisruptionBudget' && selects(o.spec.selector, labels));
        assert.ok(pdb, `no PodDisruptionBudget for ${svc}`);
        // A PDB that allows no disruption at the HPA's minimum would block every node drain.
        if (pdb.spec.minAvailable !== undefined) assert.ok(Number(pdb.spec.minAvailable) < hpa.spec.minReplicas);
      });

      test(`${svc}: probes, resources, graceful shutdown`, () => {
        const d = deployment(objects(), svc);
        const c = container(d);
        const port = defaultPort(svc);
        assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
        assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
        for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe].filter(Boolean)) assert.equal(portNumber(c, probe.httpGet.port), port);
        assert.ok(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory, 'requests and a memory limit');

        // kubelet: preStop runs first, then SIGTERM; the grace period counts both. The app exits 1
        // after SHUTDOWN_GRACE_MS (which includes SHUTDOWN_DRAIN_MS), so the pod must outlive both.
        const sleep = c.lifecycle?.preStop?.exec?.command;
        assert.ok(Array.isArray(sleep) && sleep[0] === 'sleep', 'preStop sleep, so endpoints drop the pod before it stops accepting');
        const preStopMs = Number(sleep[1]) * 1000;
        const grace = envValue(objects(), c, 'SHUTDOWN_GRACE_MS');
        assert.ok(grace, 'SHUTDOWN_GRACE_MS must be set explicitly, so the comparison below is with what runs');
        const graceMs = Number(grace);
        assert.ok(Number.isInteger(graceMs) && graceMs > 0);
        const termMs = d.spec.template.spec.terminationGracePeriodSeconds * 1000;
        assert.ok(
          termMs > preStopMs + graceMs,
          `terminationGracePeriodSeconds ${termMs / 1000}s ≤ preStop ${preStopMs / 1000}s + SHUTDOWN_GRACE_MS ${graceMs / 1000}s`,
        );
        assert.equal(envValue(objects(), c, 'MIGRATE_ON_START') ?? 'false', 'false', 'the migration Job migrates, never a starting pod');

        const spread = d.spec.template.spec.topologySpreadConstraints ?? [];
        assert.ok(spread.some((t: Json) => t.topologyKey === 'topology.kubernetes.io/zone' && selects(t.labelSelector, d.spec.template.metadata.labels)));
      });
    }

    test('every pod is non-root, unprivileged, read-only, without a service account token', () => {
      for (const { object, pod } of workloads(objects())) {
        const where = `${object.kind} ${object.metadata.name}`;
        assert.equal(pod.automountServiceAccountToken, false, where);
        assert.equal(pod.securityContext?.runAsNonRoot, true, where);
        assert.ok(pod.securityContext?.runAsUser > 0, `${where}: numeric non-root runAsUser`);
        for (const c of containersOf(pod)) {
          const sc = c.securityContext ?? {};
          assert.equal(sc.allowPrivilegeEscalation, false, `${where}/${c.name}`);
          assert.equal(sc.readOnlyRootFilesystem, true, `${where}/${c.name}`);
          assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${where}/${c.name}`);
          assert.notEqual(sc.privileged, true, `${where}/${c.name}`);
        }
      }
    });

    test('secrets: the signing key only in auth, the webhook key only in workspace-api, each client secret only where it belongs', () => {
      for (const { object, pod } of workloads(objects())) {
        const name = object.metadata.name;
        const refs = secretsReadBy(pod);
        const reads = (secret: string) => refs.some((r) => baseName(r.name, secret));
        assert.equal(reads(SIGNING_SECRET), object.kind === 'Deployment' && name === 'auth', `${object.kind} ${name} and the signing key`);
        assert.equal(reads(WEBHOOK_KEY_SECRET), object.kind === 'Deployment' && name === 'workspace-api', `${object.kind} ${name} and the webhook secret key`);
        assert.equal(
          reads(CREDENTIALS_KEY_SECRET),
          object.kind === 'Deployment' && name === 'workflow-engine',
          `${object.kind} ${name} and the credentials key`,
        );
        // A caller of auth holds its own client secret only (auth holds all, to check them).
        const clientKeys = refs.filter((r) => baseName(r.name, SERVICE_CLIENTS_SECRET)).map((r) => r.key);
        if (name !== 'auth')
          assert.ok(
            clientKeys.every((k) => k === name),
            `${name} reads client secrets ${clientKeys.join(', ')}`,
          );
        assert.ok(
          refs.every((r) => r.key !== undefined),
          `${name}: whole-Secret envFrom/volume mounts expose more than the pod needs`,
        );
      }
      const secrets = objects().filter((o) => o.kind === 'Secret');
      if (target === 'overlays/dev') assert.ok(secrets.length > 0, 'the dev overlay generates its example Secrets');
      else
        assert.deepEqual(
          secrets.map((s) => s.metadata.name),
          [],
          `${target} must only reference Secrets, never carry them`,
        );
    });

    test("the services with per-address limits behind the ingress believe its X-Forwarded-For (TRUST_PROXY), never anyone's", () => {
      // auth (login throttling, registration limit), the console edge (sign-in), mcp-gateway
      // (unauthenticated initialize), webhook-ingest (hosted forms' submissions per address): without
      // TRUST_PROXY every client has the ingress's address.
      for (const svc of ['auth', 'console', 'mcp-gateway', 'webhook-ingest']) {
        const value = envValue(objects(), container(deployment(objects(), svc)), 'TRUST_PROXY');
        assert.ok(value, `${svc}: TRUST_PROXY is set`);
        assert.notEqual(value.trim().toLowerCase(), 'true', `${svc}: TRUST_PROXY=true would believe any caller`);
      }
    });

    test('MCP_CORS_ORIGINS reaches mcp-gateway and auth from one optional ConfigMap key, empty by default', () => {
      for (const svc of ['mcp-gateway', 'auth']) {
        const e = (container(deployment(objects(), svc)).env ?? []).find((x: Json) => x.name === 'MCP_CORS_ORIGINS');
        assert.ok(e, `${svc}: MCP_CORS_ORIGINS is passed`);
        assert.deepEqual(e.valueFrom?.configMapKeyRef, { name: e.valueFrom?.configMapKeyRef?.name, key: 'MCP_CORS_ORIGINS', optional: true }, svc);
        assert.ok(baseName(e.valueFrom.configMapKeyRef.name, 'flowdesk-config'), svc);
        assert.equal(
          envValue(objects(), container(deployment(objects(), svc)), 'MCP_CORS_ORIGINS'),
          undefined,
          `${svc}: no CORS origin unless an overlay sets one`,
        );
      }
    });

    test('every referenced ConfigMap key exists when the ConfigMap is rendered here, every Secret key in dev', () => {
      for (const { object, pod } of workloads(objects())) {
        for (const c of containersOf(pod)) {
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.configMapKeyRef ?? e.valueFrom?.secretKeyRef;
            if (!ref || ref.optional) continue;
            const kind = e.valueFrom.configMapKeyRef ? 'ConfigMap' : 'Secret';
            const obj = objects().find((o) => o.kind === kind && o.metadata.name === ref.name);
            if (!obj) {
              // Created outside the repository (deploy/k8s/base/kustomization.yaml lists them); dev generates all.
              assert.notEqual(target, 'overlays/dev', `${object.metadata.name}/${c.name}: ${kind} ${ref.name} is not generated in dev`);
              continue;
            }
            assert.ok(
              Object.hasOwn({ ...obj.data, ...obj.stringData }, ref.key),
              `${object.metadata.name}/${c.name}: ${kind} ${ref.name} has no key ${ref.key}`,
            );
          }
        }
      }
    });

    test('NetworkPolicy: default deny; only mcp-gateway, the console, workflow-engine and webhook-ingest reach workspace-api', () => {
      const policies = objects().filter((o) => o.kind === 'NetworkPolicy');
      const deny = policies.find((p) => Object.keys(p.spec.podSelector ?? {}).length === 0 && !p.spec.ingress && !p.spec.egress);
      assert.ok(deny, 'no default-deny policy');
      assert.deepEqual([...deny.spec.policyTypes].sort(), ['Egress', 'Ingress']);

      const pods = workloads(objects()).map((w) => w.podLabels);
      /** Who may open connections to pods with these labels: names of this namespace's pods, or "outside". */
      const admitted = (labels: Record<string, string>): Set<string> => {
        const who = new Set<string>();
        for (const p of policies.filter((x) => x.spec.policyTypes.includes('Ingress') && selects(x.spec.podSelector, labels))) {
          for (const rule of p.spec.ingress ?? []) {
            assert.ok(rule.from?.length, `${p.metadata.name}: an ingress rule without "from" admits everyone`);
            for (const peer of rule.from) {
              if (peer.ipBlock || peer.namespaceSelector) who.add(`outside:${JSON.stringify(peer)}`);
              else for (const l of pods.filter((x) => selects(peer.podSelector, x))) who.add(l['app.kubernetes.io/name']!);
            }
          }
        }
        return who;
      };
      const labelsOf = (svc: ServiceName) => deployment(objects(), svc).spec.template.metadata.labels;
      assert.deepEqual([...admitted(labelsOf('workspace-api'))].sort(), ['console', 'mcp-gateway', 'webhook-ingest', 'workflow-engine']);
      const engineCallers = [...admitted(labelsOf('workflow-engine'))];
      assert.deepEqual(
        engineCallers.filter((w) => !w.startsWith('outside:')).sort(),
        ['console', 'mcp-gateway'],
        'the runs API: the public edge and the gateway',
      );
      // And the ingress controller only, for a waiting run's resume link (/api/v1/resume/).
      assert.deepEqual(
        engineCallers
          .filter((w) => w.startsWith('outside:'))
          .map((w) => JSON.parse(w.slice('outside:'.length)).podSelector.matchLabels['app.kubernetes.io/name']),
        ['ingress-nginx'],
      );
      const authCallers = [...admitted(labelsOf('auth'))];
      assert.deepEqual(authCallers.filter((w) => !w.startsWith('outside:')).sort(), ['console', 'mcp-gateway', 'webhook-ingest', 'workflow-engine']);
    });

    test('NetworkPolicy egress: every rule names its destination; Postgres and Kafka their pods; auth the public internet (CIMD) like the engine', () => {
      const policies = objects().filter((o) => o.kind === 'NetworkPolicy' && o.spec.policyTypes.includes('Egress'));
      // A rule with ports but no `to` lets a pod reach any address on those ports (another tenant's database, any broker).
      for (const p of policies)
        for (const rule of p.spec.egress ?? []) assert.ok(rule.to?.length, `${p.metadata.name}: an egress rule without "to" reaches every host`);
      /** The egress rules that apply to a service's pods. */
      const egressOf = (svc: string) => {
        const labels = svc === 'flowdesk-migrate' ? { 'app.kubernetes.io/name': svc } : deployment(objects(), svc).spec.template.metadata.labels;
        return policies.filter((p) => selects(p.spec.podSelector, labels)).flatMap((p) => p.spec.egress ?? []);
      };
      const reachesPort = (rules: Json[], port: number) => rules.filter((r: Json) => (r.ports ?? []).some((x: Json) => x.port === port));
      for (const svc of [...MIGRATING_SERVICES, 'flowdesk-migrate']) {
        const rules = reachesPort(egressOf(svc), 5432);
        assert.ok(rules.length, `${svc} cannot reach Postgres`);
        for (const r of rules)
          assert.deepEqual(r.to, [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgres' } } }], `${svc}: Postgres by its pods, nothing else`);
      }
      // KAFKA_BROKERS names the Strimzi cluster: its bootstrap Service is <cluster>-kafka-bootstrap.
      const config = objects().find((o) => o.kind === 'ConfigMap' && baseName(o.metadata.name, 'flowdesk-config'))!;
      const brokers = String(config.data?.KAFKA_BROKERS);
      const cluster = /^([a-z0-9-]+)-kafka-bootstrap:/.exec(brokers)?.[1];
      assert.ok(cluster, `KAFKA_BROKERS=${brokers} is not a Strimzi bootstrap Service`);
      for (const svc of ['auth', 'mcp-gateway', 'console', 'webhook-ingest', 'workflow-engine']) {
        const rules = reachesPort(egressOf(svc), 9092);
        assert.ok(rules.length, `${svc} cannot reach Kafka`);
        for (const r of rules)
          assert.deepEqual(r.to, [{ podSelector: { matchLabels: { 'strimzi.io/cluster': cluster, 'strimzi.io/kind': 'Kafka' } } }], `${svc}: the brokers only`);
      }
      // auth advertises Client ID Metadata Documents (discovery), so it must reach public https hosts,
      // with the private ranges excluded exactly as for the engine's HTTP Request node.
      const publicBlocks = (rules: Json[]) =>
        rules
          .flatMap((r: Json) => r.to)
          .filter((peer: Json) => peer.ipBlock && ['0.0.0.0/0', '::/0'].includes(peer.ipBlock.cidr))
          .map((peer: Json) => peer.ipBlock);
      const engineBlocks = publicBlocks(egressOf('workflow-engine'));
      assert.equal(engineBlocks.length, 2, 'the engine reaches the public internet over IPv4 and IPv6');
      const authRules = egressOf('auth').filter((r: Json) => publicBlocks([r]).length > 0);
      assert.deepEqual(publicBlocks(authRules), engineBlocks, 'auth reaches the same public ranges as the engine, never a private one');
      assert.deepEqual(
        authRules.flatMap((r: Json) => r.ports ?? []),
        [{ port: 443, protocol: 'TCP' }],
        'https only',
      );
      for (const block of engineBlocks) assert.ok(block.except.length >= 3, `${block.cidr}: private ranges excluded`);
      for (const svc of ['mcp-gateway', 'console', 'webhook-ingest', 'workspace-api'])
        assert.deepEqual(publicBlocks(egressOf(svc)), [], `${svc} does not reach the internet`);
    });

    test('Ingress routes exactly the public paths of the embedded start (embedded/src/services.ts) to the same services', async () => {
      const { PUBLIC_ROUTES } = await import('../../embedded/src/services.ts');
      const ingresses = objects().filter((o) => o.kind === 'Ingress');
      assert.equal(ingresses.length, 1);
      const ingress = ingresses[0]!;
      const routed = new Map<string, string>();
      for (const rule of ingress.spec.rules) {
        for (const p of rule.http.paths) {
          assert.equal(p.pathType, 'Prefix', `${p.path}: Prefix is what embedded/src/routing.ts implements`);
          const svc = objects().find((o) => o.kind === 'Service' && o.metadata.name === p.backend.service.name);
          assert.ok(svc, `${p.path} → unknown Service ${p.backend.service.name}`);
          assert.ok(
            svc.spec.ports.some((sp: Json) => sp.name === p.backend.service.port.name || sp.port === p.backend.service.port.number),
            `${p.path}: port not on the Service`,
          );
          routed.set(p.path, p.backend.service.name);
        }
      }
      const expected = new Map(PUBLIC_ROUTES.filter((r) => !(r.prefix in NOT_PUBLIC_IN_CLUSTER)).map((r) => [r.prefix, r.service]));
      assert.deepEqual(Object.fromEntries(routed), Object.fromEntries(expected));
      for (const prefix of Object.keys(NOT_PUBLIC_IN_CLUSTER))
        assert.ok(
          PUBLIC_ROUTES.some((r) => r.prefix === prefix),
          `${prefix} is no longer a public route: drop it from NOT_PUBLIC_IN_CLUSTER`,
        );
      if (target === 'overlays/prod') assert.ok(ingress.spec.tls?.length, 'prod Ingress without TLS');
    });

    test('migration Job: workspace-api, auth, mcp-gateway, workflow-engine in order, each its own image and migrate.js', () => {
      const jobs = objects().filter((o) => o.kind === 'Job');
      assert.equal(jobs.length, 1);
      const pod = jobs[0]!.spec.template.spec;
      assert.equal(pod.restartPolicy, 'Never');
      const steps = [...(pod.initContainers ?? []), ...pod.containers];
      assert.deepEqual(
        steps.map((c: Json) => c.command),
        MIGRATING_SERVICES.map((s) => ['node', `services/${s}/dist/migrate.js`]),
      );
      for (const [i, svc] of MIGRATING_SERVICES.entries()) {
        assert.ok(existsSync(path.join(REPO, 'services', svc, 'src/migrate.ts')), `services/${svc}/src/migrate.ts (compiled to dist/migrate.js)`);
        assert.equal(steps[i].image, container(deployment(objects(), svc)).image, `step ${i} runs another image than ${svc}'s Deployment`);
        const db = steps[i].env.find((e: Json) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef;
        assert.ok(db && db.key !== svc, `${svc}'s migration logs in as the schema owner, not as the service`);
      }
    });

    test('the first step of an upgrade (-l component in (config,migrations)) applies the Job and every rendered object it reads', () => {
      const firstStep = { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: ['config', 'migrations'] }] };
      const job = objects().find((o) => o.kind === 'Job')!;
      assert.ok(selects(firstStep, job.metadata.labels ?? {}));
      for (const c of containersOf(job.spec.template.spec)) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.configMapKeyRef ?? e.valueFrom?.secretKeyRef;
          const obj = ref && objects().find((o) => (o.kind === 'ConfigMap' || o.kind === 'Secret') && o.metadata.name === ref.name);
          // Objects created outside the repository exist before any step; rendered ones must come along.
          if (obj) assert.ok(selects(firstStep, obj.metadata.labels ?? {}), `${obj.kind} ${obj.metadata.name} is not applied with the Job`);
        }
      }
    });

    test('Kafka topics: every topic the code uses, with its dead-letter topic; the engine cannot outgrow its partitions', () => {
      const topics = objects().filter((o) => o.kind === 'KafkaTopic');
      const names = topics.map((t) => t.spec.topicName ?? t.metadata.name).sort();
      assert.deepEqual(
        names,
        [
          TRIGGER_TOPIC,
          dlqTopicOf(TRIGGER_TOPIC),
          CREDENTIAL_REVOKED_TOPIC,
          dlqTopicOf(CREDENTIAL_REVOKED_TOPIC),
          WORKFLOW_CHANGED_TOPIC,
          dlqTopicOf(WORKFLOW_CHANGED_TOPIC),
          ENTITY_CHANGED_TOPIC,
          dlqTopicOf(ENTITY_CHANGED_TOPIC),
          WEBHOOK_REPLY_TOPIC,
          dlqTopicOf(WEBHOOK_REPLY_TOPIC),
          // Owner throttles (fairness): state that lapses in 5 s, nothing to dead-letter.
          OWNER_THROTTLE_TOPIC,
        ].sort(),
      );
      for (const t of topics) {
        const minIsr = Number(t.spec.config?.['min.insync.replicas'] ?? 1);
        assert.ok(minIsr <= t.spec.replicas, `${t.metadata.name}: min.insync.replicas above replicas makes every acks=-1 publish fail`);
        if (target !== 'overlays/dev') assert.ok(t.spec.replicas >= 3 && minIsr >= 2, `${t.metadata.name}: one broker loss must lose nothing`);
      }
      const trigger = topics.find((t) => (t.spec.topicName ?? t.metadata.name) === TRIGGER_TOPIC)!;
      const engineHpa = objects().find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === 'workflow-engine')!;
      assert.ok(engineHpa.spec.maxReplicas <= trigger.spec.partitions, 'engine replicas beyond the partition count sit idle');
    });

    test('webhook-ingest: each replica reads the reply partition of its pod index, and there are enough of them', () => {
      const sts = deployment(objects(), 'webhook-ingest');
      assert.equal(sts.spec.podManagementPolicy, 'Parallel', 'scaling waits for no other pod');
      const env = (container(sts).env ?? []).find((e: Json) => e.name === 'REPLY_PARTITION');
      assert.equal(env?.valueFrom?.fieldRef?.fieldPath, "metadata.labels['apps.kubernetes.io/pod-index']");
      const reply = objects().find((o) => o.kind === 'KafkaTopic' && (o.spec.topicName ?? o.metadata.name) === WEBHOOK_REPLY_TOPIC)!;
      const hpa = objects().find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === 'webhook-ingest')!;
      assert.ok(
        hpa.spec.maxReplicas <= reply.spec.partitions,
        `webhook-ingest may scale to ${hpa.spec.maxReplicas} replicas but ${WEBHOOK_REPLY_TOPIC} has ${reply.spec.partitions} partitions`,
      );
    });

    test('images: one per service, the overlay pins the tag', () => {
      for (const { object, pod } of workloads(objects())) {
        for (const c of containersOf(pod)) {
          const m = /^(?:.*\/)?flowdesk\/([a-z-]+)(?::([\w.-]+))?(@sha256:[0-9a-f]{64})?$/.exec(c.image);
          assert.ok(m, `${object.metadata.name}/${c.name}: unexpected image ${c.image}`);
          if (target !== 'base') assert.ok((m[2] && m[2] !== 'latest') || m[3], `${c.image}: pin a tag or digest`);
          if (target === 'overlays/prod') assert.notEqual(m[2], 'dev');
        }
      }
    });
  });
}

describe('deploy/k8s/overlays/dev generated example keys', { skip }, () => {
  test('the dev signing key pair matches, so workspace-api verifies what auth signs', () => {
    const objects = rendered.get('overlays/dev')!;
    const secret = objects.find((o) => o.kind === 'Secret' && baseName(o.metadata.name, SIGNING_SECRET))!;
    const pub = objects.find((o) => o.kind === 'ConfigMap' && baseName(o.metadata.name, 'flowdesk-internal-jwt-public'))!;
    const privatePem = Buffer.from(secret.data!.INTERNAL_JWT_PRIVATE_KEY!, 'base64').toString('utf8');
    const derived = createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }).toString();
    assert.equal(derived.trim(), pub.data!.INTERNAL_JWT_PUBLIC_KEY!.trim());
    const webhookKey = objects.find((o) => o.kind === 'Secret' && baseName(o.metadata.name, WEBHOOK_KEY_SECRET))!;
    assert.equal(Buffer.from(Buffer.from(webhookKey.data!.WEBHOOK_SECRET_KEY!, 'base64').toString('utf8'), 'base64').length, 32);
    const credentialsKey = objects.find((o) => o.kind === 'Secret' && baseName(o.metadata.name, CREDENTIALS_KEY_SECRET))!;
    assert.equal(Buffer.from(Buffer.from(credentialsKey.data!.CREDENTIALS_KEY!, 'base64').toString('utf8'), 'base64').length, 32);
  });
});
