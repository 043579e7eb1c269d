/**
 * The MailSender port over nodemailer (docs/workflow-engine.md, "Send Email"). Every send first passes
 * the SMTP host through the SSRF guard (guardedAddress, the policy of HTTP Request, SSRF_ALLOWLIST
 * included) and connects to the address that was checked, naming the host for TLS, so a private or
 * loopback server is refused unless the operator allowed it. One connection per mail, closed after.
 *
 * Certificates: the server's must verify against Node's bundle, or against the PEM authorities given
 * as `ca` (SMTP_TLS_CA_FILE): the only way to make the engine accept a self-signed or private-CA
 * certificate; verification is never switched off. `tls` is TLS from the first byte; `starttls` requires
 * the upgrade (a server that does not offer it fails the step rather than sending in clear); `none` never
 * upgrades.
 */
import { createTransport } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { SEND_EMAIL_LIMITS } from '@flowdesk/contracts';
import { guardedAddress, SsrfPolicy, systemResolve, type ResolveHost } from '@flowdesk/service-kit';
import { NetworkError, NodeFailedError, RequestTimeoutError, SsrfBlockedError } from '../domain/errors.ts';
import type { MailMessage, MailReceipt, MailSender, MailServer } from '../domain/ports.ts';

export interface SmtpMailerOptions {
  policy?: SsrfPolicy;
  resolve?: ResolveHost;
  /** Extra certificate authorities (PEM) the server's certificate may chain to, instead of Node's bundle. */
  ca?: string;
  /** TCP connect and greeting timeout (default SEND_EMAIL_LIMITS.connectTimeoutMs). */
  connectTimeoutMs?: number;
}

/** Recipients over to, cc and bcc, as the mail will carry them (groups and display names parsed). */
function countRecipients(message: MailMessage): number {
  let n = 0;
  const walk = (list: ReturnType<typeof addressparser>): void => {
    for (const a of list) {
      if ('group' in a && a.group) walk(a.group);
      else if ('address' in a && a.address) n++;
    }
  };
  for (const field of [message.to, message.cc, message.bcc]) if (field) walk(addressparser(field));
  return n;
}

export function createSmtpMailer(options: SmtpMailerOptions = {}): MailSender {
  const policy = options.policy ?? new SsrfPolicy();
  const resolve = options.resolve ?? systemResolve;
  const connectTimeout = options.connectTimeoutMs ?? SEND_EMAIL_LIMITS.connectTimeoutMs;
  return {
    async send(server: MailServer, message: MailMessage, { timeoutMs, signal }): Promise<MailReceipt> {
      const recipients = countRecipients(message);
      if (recipients === 0) throw new NodeFailedError('no recipient address in to, cc or bcc');
      if (recipients > SEND_EMAIL_LIMITS.maxRecipients)
        throw new NodeFailedError(`${recipients} recipients: at most ${SEND_EMAIL_LIMITS.maxRecipients} per mail over to, cc and bcc`);
      const address = await guardedAddress(server.host, server.port, policy, resolve);
      const transport = createTransport({
        host: address,
        port: server.port,
        secure: server.security === 'tls',
        requireTLS: server.security === 'starttls',
        ignoreTLS: server.security === 'none',
        // The certificate is checked against the host the credential names, not the address connected to.
        ...(address !== server.host ? { servername: server.host } : {}),
        tls: { rejectUnauthorized: true, ...(options.ca ? { ca: options.ca } : {}) },
        ...(server.user ? { auth: { user: server.user, pass: server.password ?? '' } } : {}),
        connectionTimeout: connectTimeout,
        greetingTimeout: connectTimeout,
        socketTimeout: timeoutMs,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      // The send's own time limit, and the run's signal (the engine closing, a cancel): both close the connection.
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = new Promise<never>((_resolve, reject) => {
        const abort = (reason: Error) => {
          transport.close();
          reject(reason);
        };
        timer = setTimeout(() => abort(new RequestTimeoutError(`the SMTP server did not take the mail within ${timeoutMs} ms`)), timeoutMs);
        onAbort = () => abort(new NetworkError('the send was aborted'));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        const info = await Promise.race([
          transport.sendMail({
            from: message.from,
            to: message.to,
            ...(message.cc ? { cc: message.cc } : {}),
            ...(message.bcc ? { bcc: message.bcc } : {}),
            ...(message.replyTo ? { replyTo: message.replyTo } : {}),
            subject: message.subject,
            ...(message.text !== undefined ? { text: message.text } : {}),
            ...(message.html !== undefined ? { html: message.html } : {}),
            attachments: message.attachments.map((a) => ({
              filename: a.filename,
              content: a.content,
              ...(a.contentType ? { contentType: a.contentType } : {}),
            })),
          }),
          stop,
        ]);
        const list = (v: unknown) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as { address?: string }).address ?? x))) : []);
        return { messageId: String(info.messageId ?? ''), accepted: list(info.accepted), rejected: list(info.rejected) };
      } catch (err) {
        throw translate(err, server);
      } finally {
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener('abort', onAbort);
        transport.close();
      }
    },
  };
}

/** nodemailer's errors as the engine's: a refused login or recipients fail the step, a connection problem is a NetworkError (retry policies know it). */
function translate(err: unknown, server: MailServer): Error {
  if (err instanceof RequestTimeoutError || err instanceof NetworkError || err instanceof NodeFailedError || err instanceof SsrfBlockedError) return err;
  const e = err as Error & { code?: string; response?: string; rejected?: unknown[] };
  const at = `${server.host}:${server.port}`;
  const said = e.response ? `: ${e.response}` : `: ${e.message}`;
  switch (e.code) {
    case 'EAUTH':
      return new NodeFailedError(`the SMTP server ${at} refused the login${server.user ? ` of "${server.user}"` : ''}${said}`);
    case 'ETIMEDOUT':
      return new RequestTimeoutError(`the SMTP server ${at} did not answer in time${said}`);
    case 'EENVELOPE':
      return new NodeFailedError(`the SMTP server ${at} refused the recipients${said}`);
    case 'ETLS':
      return new NodeFailedError(`TLS with the SMTP server ${at} failed${said}`);
    case 'ECONNECTION':
    case 'ESOCKET':
    case 'EDNS':
      // A certificate the engine does not trust is no network hiccup: retrying would not help.
      if (/certificate|self[- ]signed|unable to verify/i.test(e.message)) return new NodeFailedError(`TLS with the SMTP server ${at} failed: ${e.message}`);
      return new NetworkError(`could not talk to the SMTP server ${at}: ${e.message}`);
    default:
      return new NodeFailedError(`the SMTP server ${at} did not take the mail${said}`);
  }
}
