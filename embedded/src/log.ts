import { pino, type Logger } from 'pino';

export type { Logger };

/** The embedded start's own log lines, in the same pino format as the services' lines. */
export function createLogger(service: string, level: string): Logger {
  return pino({ level, base: { service } });
}
