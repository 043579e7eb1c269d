// `npm run bench:mcp-latency` boots this stack and compares an MCP tool call through the gateway with
// the same workspace-api route called directly. It broke unnoticed when `/api/v1` at the front became
// the public edge (`GET /tasks?limit=1 answered 401`): this runs it with a handful of calls, as the
// npm script does, so a change that breaks it fails here. The figures it prints are not asserted
// (the machine running the tests is not quiet); that it measures all three series is.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function run(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/mcp-latency.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

test('bench:mcp-latency runs on the embedded stack and reports the three series and the overhead', async () => {
  const { code, out } = await run({ N: '5', WARMUP: '2', MAX_SECONDS: '60' });
  assert.equal(code, 0, out);
  assert.match(out, /via gateway: SDK callTool get_task +\d+\.\d+ ms/);
  assert.match(out, /same JSON-RPC without the SDK client +\d+\.\d+ ms/);
  assert.match(out, /same call as 2026-07-28 \(no session\) +\d+\.\d+ ms/);
  assert.match(out, /2025 sessionful -?\d+\.\d+ ms, 2026-07-28 -?\d+\.\d+ ms/);
  assert.match(out, /direct to workspace-api: GET \/tasks\/:id +\d+\.\d+ ms/);
  assert.match(out, /gateway overhead \(SDK client via gateway − direct\): p50 -?\d+\.\d+ ms/);
});
