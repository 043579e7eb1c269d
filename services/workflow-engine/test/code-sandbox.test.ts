import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { orderLines } from './support.ts';
import { runCode } from '../src/adapters/code-sandbox.ts';
import { CODE_LIMITS, CodeError, type CodeInput } from '../src/domain/sandbox-port.ts';

const input: CodeInput = {
  trigger: {
    lines: orderLines(),
    body: 'hello',
  },
  headers: { 'x-github-event': 'push' },
  nodes: { set_1: { who: 'Ann' } },
  now: '2025-03-01T10:00:00.000Z',
};

test('JavaScript on the trigger and earlier outputs returns JSON; host helpers for hashes, HMAC, base64 and dates', async () => {
  const output = await runCode(
    `
    const total = trigger.lines.reduce((sum, l) => sum + l.qty * l.price, 0);
    return {
      title: nodes.set_1.who + ' ordered ' + trigger.lines.length + ' lines',
      total,
      skus: trigger.lines.filter((l) => l.qty > 1).map((l) => l.sku),
      event: headers['x-github-event'],
      sha256: flowdesk.hash('sha256', trigger.body),
      hmac: flowdesk.hmac('sha256', 'secret', trigger.body, 'base64'),
      b64: flowdesk.base64Encode('héllo'),
      back: flowdesk.base64Decode(flowdesk.base64Encode('héllo')),
      due: flowdesk.addDays(flowdesk.now(), 3).slice(0, 10),
      date: new Date('2025-03-01T00:00:00Z').toISOString(),
      item: item === undefined,
    };`,
    input,
  );
  assert.deepEqual(output, {
    title: 'Ann ordered 4 lines',
    total: 28,
    skus: ['A', 'C', 'D'],
    event: 'push',
    sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    hmac: createHmac('sha256', 'secret').update('hello').digest('base64'),
    b64: Buffer.from('héllo').toString('base64'),
    back: 'héllo',
    due: '2025-03-04',
    date: '2025-03-01T00:00:00.000Z',
    item: true,
  });
  assert.equal(await runCode('return item.sku + index;', { ...input, item: { sku: 'Z' }, index: 2 }), 'Z2');
  assert.equal(await runCode('const x = 1;', input), null, 'no return: null');
});

test('the input is a copy: changing it inside changes nothing outside', async () => {
  await runCode(`trigger.lines.length = 0; nodes.set_1.who = 'Mallory'; return 1;`, input);
  assert.equal((input.trigger as { lines: unknown[] }).lines.length, 4);
  assert.deepEqual(input.nodes, { set_1: { who: 'Ann' } });
});

test('a bad helper call is a TypeError the code can catch', async () => {
  assert.equal(
    await runCode(`try { flowdesk.hash('sha3000', 'x'); } catch (e) { return e.message; }`, input),
    'flowdesk.hash: algorithm must be one of sha256, sha1, sha512, md5',
  );
});

for (const [what, code, reason] of [
  ['an endless loop', 'while (true) {}', /^the code ran longer than its limit of 1000 ms and was stopped$/],
  ['a memory bomb', 'const a = []; while (true) a.push("x".repeat(1 << 20));', /more than its memory limit of 32 MB/],
  ['a recursion too deep', 'const f = (n) => f(n + 1) + 1; return f(0);', /recursed too deep/],
  ['process', 'return process.pid;', /^ReferenceError: .*process.* is not defined/],
  ['require', 'return require("fs").readFileSync("/etc/passwd", "utf8");', /^ReferenceError: .*require.* is not defined/],
  ['fetch', 'return fetch("http://169.254.169.254/");', /^ReferenceError: .*fetch.* is not defined/],
  ['import() (no module loader; pending jobs never run)', 'return import("fs");', /returned a Promise: it runs synchronously/],
  ['async code', 'return (async () => 1)();', /returned a Promise/],
  ['a thrown error', '\nthrow new Error("bad order");', /^Error: bad order \(line 2\)$/],
  ['a syntax error', 'return {', /^SyntaxError/],
  ['returning a function', 'return () => 1;', /returned a function, not a JSON value/],
  ['a result too large', 'return "x".repeat(2000000);', /returned more than 1000000 characters of JSON/],
] as const) {
  test(`${what}: refused with a clear error; the next run is served`, async () => {
    const err = await runCode(code, input).then(
      () => assert.fail('expected the code to fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CodeError, String(err));
    assert.match(err.message, reason);
    assert.equal(await runCode('return trigger.lines.length;', input), 4);
  });
}

test('constructor.constructor and prototype tricks reach only the sandbox own global, never the host', async () => {
  const seen = await runCode(
    `const g = (() => {}).constructor.constructor("return this")();
     Object.prototype.polluted = 1;
     ({}).__proto__.title = 'p';
     return [typeof g.process, typeof g.require, typeof g.fetch, typeof g.Buffer, typeof g.setTimeout, Object.keys(g).filter((k) => k !== 'flowdesk')];`,
    input,
  );
  assert.deepEqual(seen, ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', []]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, "the host's prototypes are untouched");
  assert.equal(await runCode('return ({}).polluted;', input), null, 'and each run starts from a fresh runtime');
});

test('limits are explicit', () => {
  assert.deepEqual(CODE_LIMITS, { timeoutMs: 1_000, memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024, maxOutputChars: 1_000_000, maxErrorChars: 65_536 });
});
