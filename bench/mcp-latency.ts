// Gateway overhead of one MCP read tool call: the official SDK client calls a read tool through the
// MCP gateway and, alternating with it, the same workspace-api route is called directly as the same
// user, so background noise hits both alike. A third series sends the same JSON-RPC to the gateway
// without the SDK client, to tell the gateway's cost from the client library's, and a fourth sends it
// as MCP 2026-07-28 (the per-request `_meta` envelope, no session: the SDK 2.x server's path). Boots the embedded
// stack as `npm start` does (PGlite in a temporary home; with DATABASE_URL=postgres://... a fresh
// database on that server, dropped at the end), all on loopback; bounded in calls and time.
// Both sides call the service's own loopback URL, not the front: `/api/v1` at the front is the public
// edge (the console, API keys and sessions in), not workspace-api, and the gateway's own upstream
// call goes straight to workspace-api too, so the difference is the gateway and nothing else.
//   npm run bench:mcp-latency                  1000 sequential calls of each
//   N=2000 TOOL=list_tasks npm run bench:mcp-latency
// Env: N (calls of each kind, default 1000; or the first argument), WARMUP (default 200), TOOL
// (get_task | list_tasks), MAX_SECONDS (cuts the timed loop short, default 120), TARGET_MS (default 2).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PATH } from '@flowdesk/contracts';
import { AuthClient } from '@flowdesk/mcp-gateway';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig, startEmbedded } from '@flowdesk/embedded';

const N = positive(process.env.N ?? process.argv[2], 1000);
const WARMUP = positive(process.env.WARMUP, 200);
const MAX_SECONDS = positive(process.env.MAX_SECONDS, 120);
const TARGET_MS = Number(process.env.TARGET_MS ?? 2);
const TOOL = process.env.TOOL ?? 'get_task';
if (TOOL !== 'get_task' && TOOL !== 'list_tasks') throw new Error('TOOL must be get_task or list_tasks');

function positive(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive integer, got "${value}"`);
  return n;
}

// Whatever goes wrong, the run ends: a hung connection must not keep the bench alive.
const deadline = setTimeout(
  () => {
    console.error('bench:mcp-latency took too long; giving up');
    process.exit(2);
  },
  (MAX_SECONDS + 120) * 1000,
);
deadline.unref();

const home = await mkdtemp(path.join(os.tmpdir(), 'flowdesk-mcp-bench-'));
// On Postgres a fresh database on DATABASE_URL's server (dropped at the end), so the bench leaves nothing behind.
let pgTest: TestDatabase | undefined;
if (process.env.DATABASE_URL) pgTest = await createTestDatabase();
const config = loadConfig({
  ...process.env,
  FLOWDESK_HOME: home,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL || 'error',
  DATABASE_URL: pgTest?.url ?? '',
});
const embedded = await startEmbedded(config);
const gatewayUrl = embedded.serviceUrls['mcp-gateway'];
const workspaceApiUrl = embedded.serviceUrls['workspace-api'];
const apiPool = new Pool(workspaceApiUrl, { connections: 1, keepAliveTimeout: 60_000 });
const gatewayPool = new Pool(gatewayUrl, { connections: 1, keepAliveTimeout: 60_000 });
let client: Client | undefined;
let closeAuth = async () => {};

try {
  // The demo user's API key, as a person would take it from dev.json after `npm start`.
  const dev = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')) as { readKey: string; userId: string };
  const keys = JSON.parse(await readFile(path.join(home, 'keys.json'), 'utf8')) as { serviceClients: Record<string, string> };

  // The direct side uses the very credential the gateway presents to workspace-api: the internal JWT
  // from auth's RFC 8693 exchange of the user's key, obtained with the gateway's own AuthClient as
  // mcp-gateway (which keeps it until shortly before its 5-minute expiry). Refreshed between rounds,
  // outside the timed calls.
  const auth = new AuthClient({
    url: embedded.serviceUrls.auth,
    clientId: 'mcp-gateway',
    clientSecret: keys.serviceClients['mcp-gateway']!,
    now: () => new Date(),
    resource: `${embedded.baseUrl}${MCP_PATH}`,
  });
  closeAuth = () => auth.close();
  let internalToken = await auth.internalToken(dev.readKey);

  const direct = async (route: string) => {
    const res = await apiPool.request({
      method: 'GET',
      path: `/api/v1${route}`,
      headers: { authorization: `Bearer ${internalToken}`, accept: 'application/json' },
    });
    const body = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode !== 200) throw new Error(`GET ${route} answered ${res.statusCode}`);
    return body;
  };

  // The tool and its route. get_task reads one of the welcome tasks `npm start` seeds.
  const firstTask = ((await direct('/tasks?limit=1')).items as { id: string }[])[0];
  if (!firstTask) throw new Error('the demo user has no task (the welcome seed did not run)');
  const call =
    TOOL === 'get_task'
      ? { name: 'get_task', arguments: { taskId: firstTask.id }, route: `/tasks/${firstTask.id}` }
      : { name: 'list_tasks', arguments: { limit: 10 }, route: '/tasks?limit=10' };

  client = new Client({ name: 'flowdesk-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}${MCP_PATH}`), {
    requestInit: { headers: { authorization: `Bearer ${dev.readKey}` } },
  });
  await client.connect(transport);
  // As a real client does: it lists the tools (so the SDK validates results against their output schemas).
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === call.name)) throw new Error(`the gateway does not list ${call.name}`);

  const viaGateway = async () => {
    const result = await client!.callTool({ name: call.name, arguments: call.arguments });
    if (result.isError) throw new Error(`${call.name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };
  // The same JSON-RPC call without the SDK client (undici, like the direct side): splits the overhead
  // into what the gateway costs and what the client library costs.
  let rpcId = 1_000_000;
  const rawHeaders = {
    authorization: `Bearer ${dev.readKey}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18',
    'mcp-session-id': transport.sessionId!,
  };
  const viaGatewayRaw = async () => {
    const res = await gatewayPool.request({
      method: 'POST',
      path: MCP_PATH,
      headers: rawHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: call.name, arguments: call.arguments } }),
    });
    const body = (await res.body.json()) as { result?: { isError?: boolean; structuredContent?: unknown } };
    if (res.statusCode !== 200 || !body.result || body.result.isError) throw new Error(`raw ${call.name} answered ${res.statusCode}`);
    return body.result.structuredContent;
  };
  // The same call on the 2026-07-28 path: no session, the envelope in params._meta, the standard headers.
  const modernHeaders = {
    authorization: `Bearer ${dev.readKey}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': call.name,
  };
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'flowdesk-bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const viaGatewayModern = async () => {
    const res = await gatewayPool.request({
      method: 'POST',
      path: MCP_PATH,
      headers: modernHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: call.name, arguments: call.arguments, _meta: envelope } }),
    });
    const body = (await res.body.json()) as { result?: { isError?: boolean; structuredContent?: unknown } };
    if (res.statusCode !== 200 || !body.result || body.result.isError) throw new Error(`2026-07-28 ${call.name} answered ${res.statusCode}`);
    return body.result.structuredContent;
  };
  // All four answer the same thing, or the comparison is meaningless.
  const a = await viaGateway();
  const b = await direct(call.route);
  if (
    JSON.stringify(a) !== JSON.stringify(b) ||
    JSON.stringify(await viaGatewayRaw()) !== JSON.stringify(b) ||
    JSON.stringify(await viaGatewayModern()) !== JSON.stringify(b)
  ) {
    throw new Error('the gateway and workspace-api answered differently');
  }

  // Wall time, and the CPU time this process spent meanwhile (client, gateway, workspace-api and PGlite
  // all run in it): on a loaded machine the wall time waits for cores other processes hold, while
  // the CPU time is what the call itself costs, so the CPU overhead is the figure that survives noise.
  const cpuMs: Record<string, number[]> = { gateway: [], direct: [], raw: [], modern: [] };
  const timed = async (fn: () => Promise<unknown>, cpu: number[]) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    return wall;
  };
  const gatewayMs: number[] = [];
  const directMs: number[] = [];
  const rawMs: number[] = [];
  const modernMs: number[] = [];
  for (let i = 0; i < WARMUP; i++) {
    await viaGateway();
    await direct(call.route);
    await viaGatewayRaw();
    await viaGatewayModern();
  }
  // Rotate the order each round, so none of the three always runs right after another's GC or timer work.
  const kinds = [
    { ms: gatewayMs, cpu: cpuMs.gateway!, run: viaGateway },
    { ms: directMs, cpu: cpuMs.direct!, run: () => direct(call.route) },
    { ms: rawMs, cpu: cpuMs.raw!, run: viaGatewayRaw },
    { ms: modernMs, cpu: cpuMs.modern!, run: viaGatewayModern },
  ];
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    internalToken = await auth.internalToken(dev.readKey);
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(i + k) % kinds.length]!;
      kind.ms.push(await timed(kind.run, kind.cpu));
    }
    if ((performance.now() - started) / 1000 > MAX_SECONDS) {
      console.log(`(stopped after ${i + 1} rounds: MAX_SECONDS=${MAX_SECONDS})`);
      break;
    }
  }

  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  };
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const f = (ms: number) => `${ms.toFixed(2)} ms`.padStart(9);
  const database = config.databaseUrl ? 'postgres' : 'pglite';
  const load = os.loadavg().map((l) => l.toFixed(1));
  console.log(
    `MCP gateway latency on the embedded stack (${database}), ${gatewayMs.length} sequential calls of each after ${WARMUP} warm-up, loopback, ` +
      `each service at its own port; load average ${load.join(' ')} on ${os.availableParallelism()} cores`,
  );
  console.log(`  ${'path'.padEnd(44)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'mean'.padStart(9)} ${'cpu p50'.padStart(9)}`);
  const row = (label: string, ms: number[], cpu: number[]) =>
    console.log(`  ${label.padEnd(44)} ${f(q(ms, 0.5))} ${f(q(ms, 0.99))} ${f(mean(ms))} ${f(q(cpu, 0.5))}`);
  row(`via gateway: SDK callTool ${call.name}`, gatewayMs, cpuMs.gateway!);
  row(`  same JSON-RPC without the SDK client`, rawMs, cpuMs.raw!);
  row(`  same call as 2026-07-28 (no session)`, modernMs, cpuMs.modern!);
  row(`direct to workspace-api: GET ${call.route.replace(/[0-9a-f-]{36}/, ':id')}`, directMs, cpuMs.direct!);
  const overhead50 = q(gatewayMs, 0.5) - q(directMs, 0.5);
  const overhead99 = q(gatewayMs, 0.99) - q(directMs, 0.99);
  console.log(`  gateway overhead (SDK client via gateway − direct): p50 ${overhead50.toFixed(2)} ms, p99 ${overhead99.toFixed(2)} ms`);
  console.log(`    of which the SDK client (SDK − without it): p50 ${(q(gatewayMs, 0.5) - q(rawMs, 0.5)).toFixed(2)} ms`);
  const cpuOverhead = q(cpuMs.gateway!, 0.5) - q(cpuMs.direct!, 0.5);
  console.log(
    `  CPU overhead (this process's CPU time per call, SDK client via gateway − direct): p50 ${cpuOverhead.toFixed(2)} ms, ` +
      `of which the SDK client ${(q(cpuMs.gateway!, 0.5) - q(cpuMs.raw!, 0.5)).toFixed(2)} ms`,
  );
  console.log(`  target p50 overhead ≤ ${TARGET_MS} ms: ${overhead50 <= TARGET_MS ? 'met' : 'NOT met'}`);
  // Both without a client library: the sessionful 2025 path (raw JSON-RPC) and the 2026-07-28 path, each − direct.
  const rawOverhead = q(rawMs, 0.5) - q(directMs, 0.5);
  const modernOverhead = q(modernMs, 0.5) - q(directMs, 0.5);
  console.log(
    `  gateway overhead without a client library (− direct), p50: 2025 sessionful ${rawOverhead.toFixed(2)} ms, 2026-07-28 ${modernOverhead.toFixed(2)} ms ` +
      `(CPU ${(q(cpuMs.raw!, 0.5) - q(cpuMs.direct!, 0.5)).toFixed(2)} / ${(q(cpuMs.modern!, 0.5) - q(cpuMs.direct!, 0.5)).toFixed(2)} ms); ` +
      `2026-07-28 target ≤ 1 ms: ${modernOverhead <= 1 ? 'met' : 'NOT met'}`,
  );
} finally {
  // DELETE the MCP session, as a well-behaved client does, then close.
  await (client?.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => {});
  await client?.close().catch(() => {});
  await closeAuth();
  await apiPool.close();
  await gatewayPool.close();
  await embedded.close();
  await pgTest?.close();
  await rm(home, { recursive: true, force: true });
}
