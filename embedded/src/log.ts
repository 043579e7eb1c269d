/**
 * The embedded start's own log lines (the services log through pino): the same one-JSON-object-
 * per-line shape and numeric levels as pino, so one log reader handles both.
 */
const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;
const THRESHOLDS: Record<string, number> = { trace: 10, ...LEVELS, fatal: 60, silent: Infinity };
type Level = keyof typeof LEVELS;

export type Logger = Record<Level, (msg: string, fields?: Record<string, unknown>) => void>;

export function createLogger(service: string, level: string): Logger {
  const threshold = THRESHOLDS[level] ?? LEVELS.info;
  const at = (lvl: Level) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[lvl] < threshold) return;
    const line = { level: LEVELS[lvl], time: Date.now(), pid: process.pid, service, ...serialise(fields), msg };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

// Error objects stringify to {}; keep what helps someone reading the log.
function serialise(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, code: (value as NodeJS.ErrnoException).code } : value;
  }
  return out;
}
