// A missing or bad configuration value ends each service's process (`node services/<svc>/dist/main.js`,
// what its container runs) with exit code 78 and ONE line on stderr naming the variable — what an
// operator reads in `kubectl logs` or `podman logs` — never a stack trace (libs/service-kit env.ts,
// exitOnConfigError). No database or broker is needed: the processes stop before they connect.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONFIG_ERROR_EXIT_CODE } from '@flowdesk/service-kit';
import { entrypoint, spawnNode, type ServiceName } from './support/processes.ts';
import { defineStack, SERVICES } from './support/stack.ts';

/** Runs a service's dist/main.js with `env` to its end; its exit code and output lines. */
async function runMain(service: ServiceName, env: Record<string, string | undefined>) {
  const p = spawnNode(service, entrypoint(service, 'main.js'), env);
  const exit = await p.exited;
  // The 'exit' event can precede the last 'data' of the pipes.
  await new Promise((r) => setImmediate(r));
  return { code: exit.code, stdout: p.stdout.filter(Boolean), stderr: p.stderr.filter(Boolean) };
}

const stack = await defineStack({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/flowdesk_unused' });

for (const service of SERVICES) {
  test(`${service}: no DATABASE_URL → exit ${CONFIG_ERROR_EXIT_CODE} and one line naming it`, async () => {
    const r = await runMain(service, { ...stack.envOf(service), DATABASE_URL: undefined });
    assert.equal(r.code, CONFIG_ERROR_EXIT_CODE, [...r.stderr, ...r.stdout].join('\n'));
    assert.deepEqual(r.stderr, [`${service}: configuration error: DATABASE_URL is required (docs/configuration.md)`]);
    assert.deepEqual(r.stdout, []);
  });
}

// A value that is there but wrong: the service's own checks (main.ts, config.ts) say which one.
const badValues: [ServiceName, Record<string, string>, RegExp][] = [
  ['workflow-engine', { ENGINE_CONCURRENCY: 'lots' }, /^workflow-engine: configuration error: ENGINE_CONCURRENCY must be a positive integer/],
  ['webhook-ingest', { WEBHOOK_MAX_BACKLOG: '-1' }, /^webhook-ingest: configuration error: WEBHOOK_MAX_BACKLOG must be a whole number/],
  ['webhook-ingest', { REPLY_PARTITION: 'webhook-ingest-1' }, /^webhook-ingest: configuration error: REPLY_PARTITION must be a whole number from 0/],
  ['auth', { SESSION_IDLE_TTL: 'forever' }, /^auth: configuration error: SESSION_IDLE_TTL must be a duration/],
  ['mcp-gateway', { MCP_CORS_ORIGINS: 'https://ok.example/path' }, /^mcp-gateway: configuration error: MCP_CORS_ORIGINS: .* is not an origin/],
];
for (const [service, env, line] of badValues) {
  test(`${service}: ${Object.keys(env).join(', ')} malformed → exit ${CONFIG_ERROR_EXIT_CODE} and one line naming it`, async () => {
    const r = await runMain(service, { ...stack.envOf(service), ...env });
    assert.equal(r.code, CONFIG_ERROR_EXIT_CODE, [...r.stderr, ...r.stdout].join('\n'));
    assert.equal(r.stderr.length, 1, r.stderr.join('\n'));
    assert.match(r.stderr[0]!, line);
    assert.doesNotMatch(r.stderr[0]!, /\n|\bat /);
  });
}
