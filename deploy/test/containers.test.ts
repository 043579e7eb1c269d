// The production path through the six container images (services/<svc>/Dockerfile, built by
// deploy/docker/build-images.sh with podman, or docker where an engine answers): the migration
// entrypoints, then the six services on the machine's Postgres (a fresh database) and a local Kafka
// broker (tools/kafka), all on the host network; a webhook → HTTP Request → Create Task run, an MCP
// call through the gateway, health and readiness of each container, non-root, read-only code, SIGTERM
// → graceful stop within the grace period; and, from inside each image, what must not be in it.
// Gated like the Kafka suites (support/kafka.ts: the pass with DATABASE_URL) and on a container
// engine: skipped with the reason where there is none, a failure under CI=true (CI installs podman).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createFirstUser, startReceiver } from './support/flowdesk.ts';
import { kafkaSkipReason, startKafkaWithTopics } from './support/kafka.ts';
import { REPO_ROOT, killAll, spawnCommand, waitReady, type ServiceName, type ServiceProcess } from './support/processes.ts';
import { mcpListTasks, webhookToTask } from './support/scenarios.ts';
import { defineStack, freshDatabase, SERVICES, type Stack } from './support/stack.ts';
import { MIGRATING_SERVICES } from './k8s-support/repo.ts';

const run = promisify(execFile);
const TAG = process.env.FLOWDESK_IMAGE_TAG || 'dev';
const image = (s: ServiceName) => `flowdesk/${s}:${TAG}`;
const GRACE_MS = 10_000;

/** The engine the build script would use: docker when its engine answers, else podman; undefined: none. */
function containerEngine(): string | undefined {
  const answers = (cmd: string, args: string[]) => {
    try {
      execFileSync(cmd, args, { stdio: 'ignore', timeout: 20_000 });
      return true;
    } catch {
      return false;
    }
  };
  if (process.env.CONTAINER_ENGINE) return process.env.CONTAINER_ENGINE;
  if (answers('docker', ['info'])) return 'docker';
  if (answers('podman', ['--version'])) return 'podman';
  return undefined;
}

const engine = containerEngine();
const kafkaReason = kafkaSkipReason();
const skipReason =
  kafkaReason ?? (engine ? undefined : 'no container engine: neither podman nor an answering Docker engine (Debian: apt-get install podman runc)');
const onceReason = 'the deploy Kafka suites run once per CI run';

if (skipReason && process.env.CI === 'true' && !skipReason.startsWith(onceReason)) {
  test('the production path through the containers', () => {
    throw new Error(`CI needs podman and the local Kafka broker (.ci/run installs them): ${skipReason}`);
  });
} else if (skipReason) {
  test('the production path through the containers', { skip: skipReason }, () => {});
} else {
  const ENGINE = engine!;
  const names = new Set<string>();
  /** Runs a command in a fresh container of `svc`'s image and returns its output (throws on a non-zero exit). */
  const inImage = async (svc: ServiceName, script: string) =>
    (await run(ENGINE, ['run', '--rm', '--network', 'host', '--entrypoint', 'sh', image(svc), '-c', script], { maxBuffer: 16 << 20 })).stdout;

  /**
   * `svc`'s image as its Deployment runs it: host network, the service's environment passed by name
   * (`-e NAME`: values from this process's environment, so no secret is on a command line), read-only
   * root filesystem. Its output is collected; stop() sends the signal through the engine.
   */
  function startContainer(svc: ServiceName, port: number, env: Record<string, string | undefined>, args: string[] = []): ServiceProcess {
    const name = `flowdesk-test-${svc}-${randomBytes(4).toString('hex')}`;
    names.add(name);
    const full = { ...env, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: '0' };
    const vars = Object.keys(full).filter((k) => full[k as keyof typeof full] !== undefined);
    return spawnCommand(
      svc,
      ENGINE,
      ['run', '--rm', '--name', name, '--network', 'host', '--read-only', ...vars.flatMap((k) => ['-e', k]), ...args, image(svc)],
      full,
      `http://127.0.0.1:${port}`,
      { signal: (signal) => void run(ENGINE, ['kill', '--signal', signal, name]).catch(() => undefined) },
    );
  }
  const nameOf = (p: ServiceProcess) => [...names].find((n) => n.startsWith(`flowdesk-test-${p.name}-`))!;

  describe('the production path through the containers', { timeout: 3_600_000 }, () => {
    let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
    let kafka: Awaited<ReturnType<typeof startKafkaWithTopics>> | undefined;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let stack: Stack;
    const procs = new Map<ServiceName, ServiceProcess>();
    const startMs = new Map<ServiceName, number>();
    let apiKey: string;

    before(
      async () => {
        // The images of this checkout: the script reuses every cached layer, so a second run is quick.
        const started = Date.now();
        const built = await run(path.join(REPO_ROOT, 'deploy/docker/build-images.sh'), [], {
          cwd: REPO_ROOT,
          env: { ...process.env, CONTAINER_ENGINE: ENGINE, FLOWDESK_IMAGE_TAG: TAG },
          maxBuffer: 256 << 20,
        });
        // What the script did (sandbox adjustments, base image, each build's time) and each image's size.
        const said = built.stderr.split('\n').filter((l) => l.startsWith('build-images: '));
        process.stderr.write(`# images built or reused in ${Math.round((Date.now() - started) / 1000)} s\n${[...said, built.stdout].join('\n')}\n`);
        receiver = await startReceiver();
        [kafka, database] = await Promise.all([startKafkaWithTopics(1, 3), freshDatabase()]);
        stack = await defineStack({
          databaseUrl: database.url,
          kafkaBrokers: kafka.brokers.join(','),
          ssrfAllowlist: receiver.hostPort,
          graceMs: GRACE_MS,
        });
        // Cold, the build takes minutes (CI builds the images before its test passes, so here it reuses them).
      },
      { timeout: 3_000_000 },
    );

    after(async () => {
      await killAll(procs.values());
      await Promise.allSettled([...names].map((n) => run(ENGINE, ['rm', '--force', '--ignore', n])));
      await receiver?.close();
      await Promise.allSettled([kafka?.stop(), database?.close()]);
    });

    test('inside each image: no devDependency, no .ts source, no test, no npm cache; code owned by root, process uid 1000', async () => {
      // Names only development needs: declared as a devDependency somewhere and as a dependency nowhere.
      const workspaceDirs = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
      const pkgFiles = ['package.json'];
      for (const pattern of workspaceDirs) {
        const base = pattern.replace(/\/\*$/, '');
        const { stdout } = await run('sh', ['-c', `ls -d ${base}/*/package.json 2>/dev/null || ls -d ${base}/package.json`], { cwd: REPO_ROOT });
        pkgFiles.push(...stdout.split('\n').filter(Boolean));
      }
      const dev = new Set<string>();
      const prod = new Set<string>();
      for (const f of pkgFiles) {
        const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, f), 'utf8')) as { dependencies?: object; devDependencies?: object };
        for (const n of Object.keys(pkg.devDependencies ?? {})) dev.add(n);
        for (const n of Object.keys(pkg.dependencies ?? {})) prod.add(n);
      }
      const devOnly = [...dev].filter((n) => !prod.has(n) && !n.startsWith('@flowdesk/'));
      assert.ok(devOnly.includes('typescript') && devOnly.includes('tsx'), devOnly.join(', '));

      for (const svc of SERVICES) {
        const out = await inImage(
          svc,
          [
            'echo "uid $(id -u)"',
            // Our code, outside node_modules: any .ts that is not a declaration file, any test file or folder.
            "find /app -path /app/node_modules -prune -o \\( -name '*.ts' ! -name '*.d.ts' -o -name '*.test.*' -o -type d -name test \\) -print | sed 's/^/source /'",
            // npm's cache (_cacache) anywhere on the image's filesystem, and the usual homes of it.
            "find / -xdev \\( -name _cacache -o -path /root/.npm -o -path /home/node/.npm \\) -print 2>/dev/null | sed 's/^/cache /'",
            // Installed packages (top level and scoped), and what the runtime lockfile says requires them.
            "ls /app/node_modules | grep -v '^@' | sed 's/^/pkg /'",
            'for d in /app/node_modules/@*; do ls "$d" | sed "s|^|pkg $(basename "$d")/|"; done',
            'test -w /app/services && echo "writable /app/services" || true',
            `test -w /app/services/${svc}/dist/main.js && echo "writable main.js" || true`,
            'touch /app/x 2>/dev/null && echo "writable /app" || true',
            `stat -c 'owner %u' /app/services/${svc}/dist/main.js`,
          ].join('; '),
        );
        const lines = out.split('\n').filter(Boolean);
        const pick = (p: string) => lines.filter((l) => l.startsWith(`${p} `)).map((l) => l.slice(p.length + 1));
        assert.deepEqual(pick('uid'), ['1000'], `${svc}: runs as ${pick('uid').join()}`);
        assert.deepEqual(pick('source'), [], `${svc}: sources or tests in the image`);
        assert.deepEqual(pick('cache'), [], `${svc}: an npm cache in the image`);
        assert.deepEqual(pick('owner'), ['0'], `${svc}: the code is not root's`);
        assert.deepEqual(
          lines.filter((l) => l.startsWith('writable ')),
          [],
          `${svc}: the process user can write the code`,
        );
        const lock = JSON.parse(await inImage(svc, 'cat /app/package-lock.json')) as {
          packages: Record<string, { dependencies?: object; peerDependencies?: object; peerDependenciesMeta?: Record<string, { optional?: boolean }> }>;
        };
        // What a production package requires: its dependencies and its non-optional peer dependencies
        // (npm installs those too; the console's @xyflow/react brings react and react-dom that way).
        const required = new Set(
          Object.values(lock.packages).flatMap((e) => [
            ...Object.keys(e.dependencies ?? {}),
            ...Object.keys(e.peerDependencies ?? {}).filter((n) => !e.peerDependenciesMeta?.[n]?.optional),
          ]),
        );
        const installed = pick('pkg');
        assert.ok(installed.length > 0, `${svc}: no node_modules`);
        const devInImage = installed.filter((n) => devOnly.includes(n) && !required.has(n));
        assert.deepEqual(devInImage, [], `${svc}: devDependencies in the image`);
      }
    });

    test('the migration entrypoints run from their images (node services/<svc>/dist/migrate.js) and exit 0', async () => {
      for (const svc of MIGRATING_SERVICES) {
        const env = { ...stack.envOf(svc), LOG_LEVEL: 'info' };
        const vars = Object.keys(env).filter((k) => env[k as keyof typeof env] !== undefined);
        const r = await run(
          ENGINE,
          ['run', '--rm', '--network', 'host', '--read-only', ...vars.flatMap((k) => ['-e', k]), image(svc), 'node', `services/${svc}/dist/migrate.js`],
          {
            env: { ...process.env, ...env },
          },
        ).catch((err: Error & { stdout?: string; stderr?: string }) => {
          throw new Error(`${svc} migrate: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        });
        assert.match(r.stdout, /migrate done/, `${svc}: ${r.stdout}`);
      }
    });

    test('the six containers start on Postgres + Kafka, read-only, and answer /readyz and their image health check', async () => {
      await Promise.all(
        SERVICES.map(async (svc) => {
          const port = Number(new URL(stack.url(svc)).port);
          const started = Date.now();
          const p = startContainer(svc, port, stack.envOf(svc));
          procs.set(svc, p);
          await waitReady(p, 300_000).catch((err: Error) => {
            throw new Error(`${svc}: ${err.message}`);
          });
          startMs.set(svc, Date.now() - started);
        }),
      );
      process.stderr.write(`# container start → /readyz 200 (ms): ${JSON.stringify(Object.fromEntries(startMs))}\n`);
      ({ apiKey } = await createFirstUser(database!.url));
      for (const svc of SERVICES) {
        assert.equal((await fetch(`${stack.url(svc)}/readyz`)).status, 200, svc);
        assert.equal((await fetch(`${stack.url(svc)}/healthz`)).status, 200, svc);
        // The image's HEALTHCHECK (node's fetch against /healthz), run by the engine inside the container.
        if (ENGINE === 'podman') await run(ENGINE, ['healthcheck', 'run', nameOf(procs.get(svc)!)]);
        const inspected = await run(ENGINE, ['inspect', '--format', '{{.Config.User}}', nameOf(procs.get(svc)!)]);
        assert.equal(inspected.stdout.trim(), '1000:1000', `${svc} runs as ${inspected.stdout.trim()}`);
      }
    });

    test('webhook → HTTP Request → Create Task through the containers and Kafka', async () => {
      await webhookToTask(stack, apiKey, receiver);
    });

    test('MCP through the gateway container with the SDK client', async () => {
      await mcpListTasks(stack, apiKey);
    });

    test(`SIGTERM: every container stops gracefully (exit 0) within SHUTDOWN_GRACE_MS (${GRACE_MS} ms)`, async () => {
      const stops = await Promise.all(SERVICES.map(async (svc) => [svc, await procs.get(svc)!.stop('SIGTERM')] as const));
      for (const [svc, exit] of stops) {
        assert.equal(exit.code, 0, `${svc} exited ${exit.code ?? exit.signal}:\n${procs.get(svc)!.stderr.slice(-10).join('\n')}`);
        assert.ok(exit.ms < GRACE_MS + 5_000, `${svc} took ${exit.ms} ms to stop`);
      }
      process.stderr.write(`# SIGTERM → exit (ms): ${JSON.stringify(Object.fromEntries(stops.map(([s, e]) => [s, e.ms])))}\n`);
    });
  });
}
