import { inspect } from 'node:util';

/**
 * A missing or bad configuration value. Its message names the variable; a service's main ends with
 * that one line (exitOnConfigError), not a stack trace: the reader is an operator, not a developer.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The exit code of a process that stopped on its configuration (EX_CONFIG, sysexits.h). */
export const CONFIG_ERROR_EXIT_CODE = 78;

/** A configuration variable a service cannot start without: a clear error naming it, at start. */
export function requiredEnv(env: Record<string, string | undefined>, name: string): string {
  const v = env[name];
  if (!v) throw new ConfigError(`${name} is required`);
  return v;
}

/** Runs a function that only reads configuration (a service's loadConfig): whatever it throws is a ConfigError. */
export function readConfig<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/**
 * For a service's main, from its first line until it listens: a ConfigError that reaches the top
 * (a top-level await rejected included) ends the process with one line on stderr,
 * `<service>: configuration error: <message>`, and exit code 78. Any other error is printed as
 * Node prints it (with its stack), exit code 1. Returns the function that removes the handler, for
 * when the service is up.
 */
export function exitOnConfigError(service: string): () => void {
  const handler = (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${service}: configuration error: ${err.message} (docs/configuration.md)\n`);
      process.exit(CONFIG_ERROR_EXIT_CODE);
    }
    process.stderr.write(`${inspect(err)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', handler);
  return () => process.off('uncaughtException', handler);
}

/**
 * A comma-separated list of browser origins (`scheme://host[:port]`, http or https, no path), e.g.
 * MCP_CORS_ORIGINS; anything else is a configuration error naming the variable. Trailing slashes are
 * dropped; the origins are returned as written (compare them lower-cased).
 */
export function originList(name: string, value: string | undefined): string[] {
  const list = (value ?? '')
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const o of list) {
    let url: URL | undefined;
    try {
      url = new URL(o);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== o.toLowerCase()) {
      throw new ConfigError(`${name}: ${o} is not an origin (scheme://host[:port], no path)`);
    }
  }
  return list;
}

/**
 * INTROSPECTION_CACHE_MS: how long an active introspection answer is reused (0..60000, default
 * 30000): the console edge's and the MCP gateway's AuthClient, in their own processes and in the
 * embedded start.
 */
export function introspectionCacheMsFrom(env: Record<string, string | undefined>): number {
  const cacheMs = Number(env.INTROSPECTION_CACHE_MS || 30_000);
  if (!Number.isInteger(cacheMs) || cacheMs < 0 || cacheMs > 60_000) throw new Error('INTROSPECTION_CACHE_MS must be 0..60000');
  return cacheMs;
}
