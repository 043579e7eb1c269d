import type { FastifyServerOptions } from 'fastify';

/**
 * Structured pino logs, one line per event, with the request id fastify attaches to every line of a
 * request. Credentials never reach a log: the headers that carry them are redacted wherever they
 * appear.
 */
export function loggerOptions(
  service: string,
  level = process.env.LOG_LEVEL ?? 'info',
  stream?: { write(line: string): void },
): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
    base: { service },
    redact: {
      paths: [
        ...['req.headers', 'headers'].flatMap((at) => [
          `${at}.authorization`,
          `${at}.cookie`,
          `${at}["x-webhook-secret"]`,
          `${at}["webhook-signature"]`,
          // The console edge's service credential beside a session token (CONSOLE_CLIENT_HEADER).
          `${at}["x-flowdesk-console-authorization"]`,
        ]),
        'res.headers["set-cookie"]',
        '*.password',
        '*.secret',
        '*.token',
        '*.access_token',
        '*.refresh_token',
      ],
      censor: '[redacted]',
    },
  };
}
