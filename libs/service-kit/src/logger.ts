import type { FastifyRequest, FastifyServerOptions } from 'fastify';
import { maskUrlSecrets, RECEIVED_SECRET_PARAM_NAME } from '@flowdesk/contracts';

/**
 * Structured pino logs, one line per event, with the request id fastify attaches to every line of a
 * request. Credentials never reach a log: the headers that carry them are redacted wherever they
 * appear, and so are the values of credential-looking query parameters of the request URL and a
 * `user:password@` password (`maskUrlSecrets`: access_token, token, session, key, api_key, secret,
 * signature, sig, code, password, auth…, RECEIVED_SECRET_PARAM_NAME in libs/contracts), in the `req`
 * serializer fastify uses for "incoming request" and every error logged with the request.
 * Credentials do arrive in query strings (an OAuth redirect's `code`, a client that puts its key in
 * `?access_token=`), and every request's URL is logged at info.
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
    serializers: { req: requestForLog },
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

/** Fastify's own request serializer, with the URL redacted. */
function requestForLog(req: FastifyRequest) {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? maskUrlSecrets(req.url, RECEIVED_SECRET_PARAM_NAME) : req.url,
    version: [req.headers?.['accept-version']].flat()[0],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}
