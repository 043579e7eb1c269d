/**
 * The Code node's sandbox (docs/workflow-engine.md, "Code"), an implementation of the Sandbox port
 * (domain/sandbox-port.ts): JavaScript run by QuickJS compiled to
 * WebAssembly (quickjs-emscripten), not node:vm, which is no security boundary. The code sees JSON
 * copies of its input and the helpers below, nothing of the host: no process, require, fetch,
 * timers, file system or network; its heap is QuickJS's own, inside the WebAssembly memory. Each
 * run gets a fresh runtime (memory limit, stack limit, an interrupt handler with a deadline),
 * disposed afterwards. The WebAssembly file ships inside @jitl/quickjs-wasmfile-release-sync (no
 * download at install or at run time); the module loads once per process.
 */
import { createHash, createHmac } from 'node:crypto';
import { evaluateExpression } from '@flowdesk/contracts/expressions';
import { CODE_LIMITS, CodeError, type CodeInput, type Sandbox } from '../domain/sandbox-port.ts';
import variantModule from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  shouldInterruptAfterDeadline,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

/**
 * The Sandbox port's in-process form: the same QuickJS and JSONata, on the caller's thread, so a
 * host helper or a backtracking regex is not preempted. For unit tests of the executor and the
 * worker itself (adapters/sandbox-worker.ts); the engine wires the worker pool (adapters/sandbox-pool.ts).
 */
export const inProcessSandbox: Sandbox = {
  runCode: (job) => runCode(job.code, job.data),
  evaluate: async (job) => {
    const values: unknown[] = [];
    for (const source of job.sources) values.push(await evaluateExpression(source, job.scope));
    return values;
  },
};

// The package's types describe its CommonJS build (the variant under `default`); its ESM build, which
// Node loads here, exports the variant itself. Either way: the variant.
const variant = ((variantModule as unknown as { default?: QuickJSSyncVariant }).default ?? variantModule) as QuickJSSyncVariant;
let module: Promise<QuickJSWASMModule> | undefined;
const quickjs = () => (module ??= newQuickJSWASMModuleFromVariant(variant));

/** Loads QuickJS's WebAssembly module now (a sandbox worker, before its first job). */
export async function warmUp(): Promise<void> {
  await quickjs();
}

const HASHES = new Set(['sha256', 'sha1', 'sha512', 'md5']);
const ENCODINGS = new Set(['hex', 'base64', 'base64url']);

/**
 * Runs `code` as the body of a function receiving `trigger`, `headers`, `nodes`, `item`, `index`
 * and returns what it returns (a JSON copy; undefined → null). Rejects with CodeError.
 */
export async function runCode(code: string, input: CodeInput, limits: Partial<Record<keyof typeof CODE_LIMITS, number>> = {}): Promise<unknown> {
  const { timeoutMs, memoryBytes, stackBytes, maxOutputChars } = { ...CODE_LIMITS, ...limits };
  const runtime = (await quickjs()).newRuntime();
  try {
    runtime.setMemoryLimit(memoryBytes);
    runtime.setMaxStackSize(stackBytes);
    const deadline = Date.now() + timeoutMs;
    let interrupted: boolean | undefined;
    const timeUp = shouldInterruptAfterDeadline(deadline);
    runtime.setInterruptHandler((rt) => (interrupted = timeUp(rt) === true));
    const ctx = runtime.newContext();
    try {
      installHelpers(ctx, input.now);
      const inputJson = ctx.newString(JSON.stringify({ ...input, now: undefined, rawBody: undefined }));
      ctx.setProp(ctx.global, '__input', inputJson);
      inputJson.dispose();
      // The body runs in strict mode inside a function; its return value leaves as JSON text.
      const wrapped = `(() => { const { trigger, headers, nodes, item, index } = JSON.parse(globalThis.__input); delete globalThis.__input;
const __result = (function (trigger, headers, nodes, item, index) { "use strict";
${code}
})(trigger, headers, nodes, item, index);
if (typeof __result === 'function' || typeof __result === 'symbol') throw new TypeError('the code returned a ' + typeof __result + ', not a JSON value');
if (__result instanceof Promise) throw new TypeError('the code returned a Promise: it runs synchronously (no await, no I/O to wait for)');
return __result === undefined ? 'null' : JSON.stringify(__result); })()`;
      const result = ctx.evalCode(wrapped, 'code.js');
      if (result.error) {
        const failure = ctx.dump(result.error) as unknown;
        result.error.dispose();
        if (interrupted) throw new CodeError(`the code ran longer than its limit of ${timeoutMs} ms and was stopped`);
        throw new CodeError(describe(failure, memoryBytes));
      }
      const text = ctx.getString(result.value);
      result.value.dispose();
      if (typeof text !== 'string') throw new CodeError('the code returned a value that is not JSON');
      if (text.length > maxOutputChars) throw new CodeError(`the code returned more than ${maxOutputChars} characters of JSON`);
      return JSON.parse(text) as unknown;
    } finally {
      release(() => ctx.dispose());
    }
  } catch (err) {
    if (err instanceof CodeError) throw err;
    // The interpreter overflowed the host's stack before its own limit, ran out of memory, or another fault.
    if (err instanceof RangeError) throw new CodeError(`the code recursed too deep (${err.message})`);
    throw new CodeError(`the code failed inside the sandbox: ${(err as Error).message}`);
  } finally {
    release(() => runtime.dispose());
  }
}

/**
 * Frees a context or runtime. QuickJS may abort while freeing one that a stack overflow left with
 * live objects; an aborted WebAssembly instance is unusable, so the next run loads a fresh one
 * (the old instance's memory goes with its last reference).
 */
function release(free: () => void): void {
  try {
    free();
  } catch {
    module = undefined;
  }
}

function describe(failure: unknown, memoryBytes: number): string {
  const e = failure as { name?: string; message?: string; stack?: string } | null;
  const message = e && typeof e === 'object' ? `${e.name ?? 'Error'}: ${e.message ?? ''}` : `threw ${JSON.stringify(failure) ?? String(failure)}`;
  if (/out of memory/i.test(message)) return `the code used more than its memory limit of ${Math.round(memoryBytes / 1024 / 1024)} MB (${message})`;
  if (/stack overflow/i.test(message)) return `the code recursed too deep (${message})`;
  const line = /code\.js:(\d+)/.exec(e?.stack ?? '')?.[1];
  // The wrapper puts the code's first line at line 3.
  return line && Number(line) >= 3 ? `${message} (line ${Number(line) - 2})` : message;
}

/** `flowdesk.*`: hashes, HMAC, base64 and the run's clock, computed by the host on strings only. */
function installHelpers(ctx: QuickJSContext, now: string): void {
  const helpers = ctx.newObject();
  const str = (h: QuickJSHandle | undefined, what: string): string => {
    if (!h || ctx.typeof(h) !== 'string') throw new TypeError(`${what} must be a string`);
    return ctx.getString(h);
  };
  const encoding = (h: QuickJSHandle | undefined): 'hex' | 'base64' | 'base64url' => {
    const e = h && ctx.typeof(h) === 'string' ? ctx.getString(h) : 'hex';
    if (!ENCODINGS.has(e)) throw new TypeError(`encoding must be one of ${[...ENCODINGS].join(', ')}`);
    return e as 'hex' | 'base64' | 'base64url';
  };
  const algorithm = (h: QuickJSHandle | undefined): string => {
    const a = str(h, 'algorithm').toLowerCase().replace('-', '');
    if (!HASHES.has(a)) throw new TypeError(`algorithm must be one of ${[...HASHES].join(', ')}`);
    return a;
  };
  const fn = (name: string, impl: (...args: QuickJSHandle[]) => string) => {
    const f = ctx.newFunction(name, (...args) => {
      try {
        return ctx.newString(impl(...args));
      } catch (err) {
        return { error: ctx.newError({ name: 'TypeError', message: `flowdesk.${name}: ${(err as Error).message}` }) };
      }
    });
    ctx.setProp(helpers, name, f);
    f.dispose();
  };
  fn('hash', (alg, text, enc) => createHash(algorithm(alg)).update(str(text, 'text'), 'utf8').digest(encoding(enc)));
  fn('hmac', (alg, key, text, enc) => createHmac(algorithm(alg), str(key, 'key')).update(str(text, 'text'), 'utf8').digest(encoding(enc)));
  fn('base64Encode', (text) => Buffer.from(str(text, 'text'), 'utf8').toString('base64'));
  fn('base64Decode', (text) => Buffer.from(str(text, 'text'), 'base64').toString('utf8'));
  fn('now', () => now);
  fn('addDays', (date, days) => {
    const t = Date.parse(str(date, 'date'));
    const n = days && ctx.typeof(days) === 'number' ? ctx.getNumber(days) : NaN;
    if (Number.isNaN(t) || !Number.isFinite(n)) throw new TypeError('takes an ISO date and a number of days');
    return new Date(t + n * 86_400_000).toISOString();
  });
  ctx.setProp(ctx.global, 'flowdesk', helpers);
  helpers.dispose();
}
