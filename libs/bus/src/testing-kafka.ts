// A real Apache Kafka broker (or a three-broker cluster) for tests and development, run from the
// jars scripts/install-kafka.sh put in tools/kafka/lib, with the machine's Java. KRaft, no
// ZooKeeper: every node is broker and controller at once (a three-node cluster survives one node's
// death, controller quorum included). Data in a temporary folder, ports free on 127.0.0.1.
// Not part of the runtime API (exported through @flowdesk/bus/testing).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

/** tools/kafka of this repository (found upwards from this file, so src/ and dist/ both work). */
export function kafkaToolsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'tools', 'kafka');
    if (existsSync(path.join(candidate, 'pom.xml'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('tools/kafka/pom.xml not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** The pinned Kafka version (tools/kafka/pom.xml). */
export function kafkaVersion(): string {
  const pom = readFileSync(path.join(kafkaToolsDir(), 'pom.xml'), 'utf8');
  const m = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom);
  if (!m) throw new Error('tools/kafka/pom.xml has no <kafka.version>');
  return m[1]!;
}

/**
 * Why a local broker cannot run here, or undefined when it can: Java on PATH and the pinned jars
 * installed (`scripts/install-kafka.sh`, which .ci/run and the README's test command run).
 */
export function localKafkaUnavailable(): string | undefined {
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (java.error || java.status !== 0) return 'no `java` on PATH (Java 17+ runs the local Kafka broker)';
  const version = kafkaVersion();
  if (!existsSync(path.join(kafkaToolsDir(), 'lib', `kafka_2.13-${version}.jar`))) {
    return `Kafka ${version} is not installed: run scripts/install-kafka.sh (needs Maven)`;
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface LocalKafkaOptions {
  /** 1 (default) or 3: a three-node cluster gets replication factor 3 and min.insync.replicas 2 by default. */
  nodes?: 1 | 3;
  /** JVM heap per node; default 384m (two cores and other work on the machine). */
  heap?: string;
  /** Keep the data folder after stop() (for looking at broker.log). Default false. */
  keepData?: boolean;
  /** Extra server.properties lines for every node. */
  properties?: Record<string, string | number | boolean>;
  /** How long start() waits for every node to be registered and unfenced. Default 120 s. */
  readyTimeoutMs?: number;
  /** C1-only JIT (-XX:TieredStopAtLevel=1): starts faster, runs slower. Default true; benchmarks turn it off. */
  quickStart?: boolean;
  /** Echo the brokers' log lines to stderr. Default: FLOWDESK_KAFKA_ECHO=1. */
  echo?: boolean;
}

export interface KafkaNode {
  id: number;
  /** host:port of its client listener. */
  address: string;
  running: boolean;
  pid: number | undefined;
}

export interface LocalKafka {
  /** host:port of every node, for KAFKA_BROKERS / kafkajs. */
  brokers: string[];
  nodes: KafkaNode[];
  dataDir: string;
  /** kill -9 one node (no controlled shutdown): what a crashed machine looks like to the cluster. */
  kill(nodeId: number): Promise<void>;
  /** Starts stopped nodes again on their ports and data (all together: a lone node of three has no quorum); waits until they are registered. */
  restart(...nodeIds: number[]): Promise<void>;
  /** Node id of the current leader of `topic`'s partition. */
  leaderOf(topic: string, partition?: number): Promise<number>;
  /** Kills every node and removes the data folder (unless keepData). Idempotent. */
  stop(): Promise<void>;
}

interface NodeProc extends KafkaNode {
  brokerPort: number;
  controllerPort: number;
  dir: string;
  child?: ChildProcess;
  exited?: Promise<void>;
}

const TEST_LOG4J = `
status = error
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRefs = stdout
rootLogger.appenderRef.stdout.ref = STDOUT
logger.server.name = kafka.server.KafkaBroker
logger.server.level = INFO
logger.raft.name = org.apache.kafka.raft
logger.raft.level = WARN
`;

/** server.properties of one node: production semantics, test-sized resources and timeouts. */
function serverProperties(n: NodeProc, all: NodeProc[], extra: LocalKafkaOptions['properties']): string {
  const rf = all.length;
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': n.id,
    'controller.quorum.voters': all.map((o) => `${o.id}@127.0.0.1:${o.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${n.brokerPort},CONTROLLER://127.0.0.1:${n.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${n.brokerPort}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': path.join(n.dir, 'data'),
    // As production (deploy/k8s): topics are created on purpose, replicated to every node, and a
    // write needs two in-sync copies when there are three.
    'auto.create.topics.enable': false,
    'default.replication.factor': rf,
    'min.insync.replicas': rf >= 3 ? 2 : 1,
    'offsets.topic.replication.factor': rf,
    'offsets.topic.num.partitions': 6,
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': rf >= 3 ? 2 : 1,
    'transaction.state.log.num.partitions': 3,
    'unclean.leader.election.enable': false,
    // Test-sized: a group forms at once; a dead node is fenced (and its partitions moved) within
    // seconds instead of the default 9 s; few threads and small buffers on a two-core machine.
    'group.initial.rebalance.delay.ms': 0,
    'broker.heartbeat.interval.ms': 500,
    // One node has nothing to fail over to: Kafka's default 9 s there, so a JVM starved on a loaded
    // machine is not fenced by its own controller (seen at load average 39: no leaders for seconds).
    'broker.session.timeout.ms': rf > 1 ? 3000 : 9000,
    'num.network.threads': 2,
    'num.io.threads': 2,
    'background.threads': 2,
    'num.recovery.threads.per.data.dir': 1,
    'num.replica.fetchers': 1,
    'log.cleaner.threads': 1,
    'log.cleaner.dedupe.buffer.size': 4 * 1024 * 1024,
    'log.segment.bytes': 64 * 1024 * 1024,
    'share.coordinator.state.topic.replication.factor': rf,
    'share.coordinator.state.topic.min.isr': rf >= 3 ? 2 : 1,
    ...extra,
  };
  return (
    Object.entries(props)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n'
  );
}

function classpath(): string {
  const lib = path.join(kafkaToolsDir(), 'lib');
  return readdirSync(lib)
    .filter((f) => f.endsWith('.jar'))
    .map((f) => path.join(lib, f))
    .join(path.delimiter);
}

/** As bin/kafka-run-class.sh, minus what a test broker does not need (GC logs, JMX), plus a small heap and a quick start. */
function jvmArgs(heap: string, log4j: string, quickStart = true): string[] {
  return [
    `-Xmx${heap}`,
    '-Xms64m',
    '-XX:+UseSerialGC',
    ...(quickStart ? ['-XX:TieredStopAtLevel=1'] : []),
    '-XX:-UsePerfData',
    '-Xss512k',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4j}`,
    '-cp',
    classpath(),
  ];
}

/**
 * Runs `java` under a watchdog shell: when this Node process dies (even by SIGKILL, or a test
 * runner that gave up), the shell kills the JVM, so no broker outlives its test. The shell prints
 * the JVM's pid first; kill() signals the JVM itself (kill -9 means the broker, not the watchdog).
 */
function spawnJava(args: string[], logFile: string, echo: boolean, label: string): { child: ChildProcess; pid: Promise<number>; exited: Promise<void> } {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = [
    `java ${quoted} >>'${logFile}' 2>&1 &`,
    'j=$!',
    'echo "$j"',
    "trap 'kill -9 $j 2>/dev/null; exit 0' TERM INT HUP",
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $j 2>/dev/null; do sleep 1; done`,
    'kill -9 $j 2>/dev/null',
    'wait $j 2>/dev/null',
  ].join('\n');
  const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      const line = buf.split('\n')[0];
      if (buf.includes('\n')) resolve(Number(line));
    });
    child.once('exit', () => reject(new Error(`${label}: the java process did not start`)));
  });
  if (echo) {
    // Follow the log file for a person watching (FLOWDESK_KAFKA_ECHO=1).
    const tail = spawn('tail', ['-F', '-n', '+1', logFile], { stdio: ['ignore', 'pipe', 'ignore'] });
    tail.stdout.on('data', (d: Buffer) => process.stderr.write(d.toString().replace(/^/gm, `[${label}] `)));
    void exited.then(() => tail.kill());
  }
  return { child, pid, exited };
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The watchdog shell would do it within a second; this does it at once on a normal exit.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGTERM');
  });
}

/** Formats KRaft storage for one node (bin/kafka-storage.sh format). */
/**
 * A KRaft cluster id: 16 random bytes in base64url, never starting with "-". kafka-storage's argument
 * parser reads an id such as "-x3…" as an option ("--cluster-id: expected one argument"), 1 start in 64;
 * Kafka's own Uuid.randomUuid() skips such ids for the same reason.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

async function formatStorage(n: NodeProc, clusterId: string, heap: string, log4j: string): Promise<void> {
  const args = [
    ...jvmArgs(heap, log4j),
    'kafka.tools.StorageTool',
    'format',
    '-t',
    clusterId,
    '-c',
    path.join(n.dir, 'server.properties'),
    '--ignore-formatted',
  ];
  const out: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const p = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.on('data', (d) => out.push(String(d)));
    p.stderr.on('data', (d) => out.push(String(d)));
    p.once('error', reject);
    p.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`kafka-storage format of node ${n.id} exited ${code}:\n${out.join('')}`);
}

/**
 * Starts one broker (default) or a three-node cluster and resolves once every node is registered
 * and serves metadata. Throws, with the last broker log lines, when it does not come up.
 */
export async function startLocalKafka(options: LocalKafkaOptions = {}): Promise<LocalKafka> {
  const unavailable = localKafkaUnavailable();
  if (unavailable) throw new Error(unavailable);
  const count = options.nodes ?? 1;
  const heap = options.heap ?? '384m';
  const echo = options.echo ?? process.env.FLOWDESK_KAFKA_ECHO === '1';
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flowdesk-kafka-'));
  const log4j = path.join(dataDir, 'log4j2.properties');
  await writeFile(log4j, TEST_LOG4J);
  const nodes: NodeProc[] = [];
  for (let i = 1; i <= count; i++) {
    const dir = path.join(dataDir, `node-${i}`);
    await mkdir(dir, { recursive: true });
    nodes.push({ id: i, brokerPort: await freePort(), controllerPort: await freePort(), dir, address: '', running: false, pid: undefined });
  }
  for (const n of nodes) {
    n.address = `127.0.0.1:${n.brokerPort}`;
    await writeFile(path.join(n.dir, 'server.properties'), serverProperties(n, nodes, options.properties));
  }
  const brokers = nodes.map((n) => n.address);
  let stopped = false;

  const launch = async (n: NodeProc) => {
    const logFile = path.join(n.dir, 'broker.log');
    const { child, pid, exited } = spawnJava(
      [...jvmArgs(heap, log4j, options.quickStart ?? true), 'kafka.Kafka', path.join(n.dir, 'server.properties')],
      logFile,
      echo,
      `kafka-${n.id}`,
    );
    killOnExit(child);
    n.child = child;
    n.exited = exited;
    n.running = true;
    n.pid = await pid;
    void exited.then(() => {
      if (n.child === child) n.running = false;
    });
  };
  const lastLog = (n: NodeProc) => {
    try {
      return readFileSync(path.join(n.dir, 'broker.log'), 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '(no broker.log)';
    }
  };
  const admin = () =>
    new Kafka({ clientId: 'local-kafka', brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 1000, requestTimeout: 3000 }).admin();
  /** Until every node in `want` is a registered broker answering metadata. */
  const waitRegistered = async (want: number[]) => {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
    for (;;) {
      for (const n of nodes) if (want.includes(n.id) && !n.running) throw new Error(`kafka node ${n.id} exited during start:\n${lastLog(n)}`);
      const a = admin();
      try {
        await a.connect();
        const cluster = await a.describeCluster();
        const ids = new Set(cluster.brokers.map((b) => b.nodeId));
        if (want.every((id) => ids.has(id))) return;
      } catch {
        // not up yet
      } finally {
        await a.disconnect().catch(() => {});
      }
      if (Date.now() > deadline)
        throw new Error(`kafka nodes ${want.join(',')} not ready within ${options.readyTimeoutMs ?? 120_000} ms:\n${nodes.map(lastLog).join('\n---\n')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(
      nodes.map(async (n) => {
        if (n.pid && n.running) {
          try {
            process.kill(n.pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        n.child?.kill('SIGTERM');
        await n.exited;
      }),
    );
    if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
  };

  try {
    const clusterId = newClusterId();
    await Promise.all(nodes.map((n) => formatStorage(n, clusterId, '256m', log4j)));
    await Promise.all(nodes.map(launch));
    await waitRegistered(nodes.map((n) => n.id));
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    brokers,
    nodes,
    dataDir,
    async kill(nodeId) {
      const n = nodes.find((x) => x.id === nodeId);
      if (!n) throw new Error(`no kafka node ${nodeId}`);
      if (!n.running || !n.pid) return;
      process.kill(n.pid, 'SIGKILL');
      await n.exited;
      n.running = false;
    },
    async restart(...nodeIds) {
      const which = nodes.filter((x) => nodeIds.includes(x.id));
      if (which.length !== nodeIds.length) throw new Error(`no kafka node among ${nodeIds.join(',')}`);
      await Promise.all(which.filter((n) => !n.running).map(launch));
      await waitRegistered(nodeIds);
    },
    async leaderOf(topic, partition = 0) {
      const a = new Kafka({ clientId: 'local-kafka', brokers: nodes.filter((n) => n.running).map((n) => n.address), logLevel: logLevel.NOTHING }).admin();
      await a.connect();
      try {
        const { topics } = await a.fetchTopicMetadata({ topics: [topic] });
        const p = topics[0]?.partitions.find((x) => x.partitionId === partition);
        if (!p) throw new Error(`no partition ${partition} of ${topic}`);
        return p.leader;
      } finally {
        await a.disconnect();
      }
    },
    stop,
  };
}
