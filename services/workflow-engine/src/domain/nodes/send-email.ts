/**
 * Send Email node (docs/workflow-engine.md, "Send Email"): one mail through the SMTP server of an smtp
 * credential (the MailSender port: adapters/smtp-mailer.ts, SSRF-guarded). Recipients, subject, bodies
 * and attachments are templated; an attachment's content is usually an earlier step's output, as text
 * or base64, within SEND_EMAIL_LIMITS. The recorded input names the credential and the server's host,
 * never its login; attachments are recorded by name, type and size. A mail is sent once per execution
 * and never retried (a repeat after a lost answer would send it twice).
 */
import { SEND_EMAIL_LIMITS, type NodeParams, type SmtpSecurity } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { MailMessage, MailServer } from '../ports.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export type SendEmailParams = NodeParams<'send_email'>;

export interface SendEmailInput {
  credential: string;
  /** Not recorded but its host: the server and its login. */
  server: MailServer;
  message: MailMessage;
  timeoutMs: number;
  /** What is wrong with the rendered mail (an attachment over the limit): execute fails the step with it. */
  problem?: string;
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;
const ONE_LINE = ['to', 'cc', 'bcc', 'replyTo', 'subject'] as const;

/** A rendered value as text: an object (a whole-value reference to JSON output) becomes its JSON. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));

export const sendEmailHandler: NodeHandler<SendEmailParams, SendEmailInput> = {
  isAction: true,
  render: (params, renderer) => renderSendEmail(params, renderer),
  mask: ({ server, message, credential, timeoutMs, problem: _problem }) => ({
    credential,
    host: server.host,
    port: server.port,
    ...message,
    attachments: message.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType ?? null, bytes: a.content.length })),
    timeoutMs,
  }),
  execute: async (input, ctx) => {
    if (input.problem) throw new NodeFailedError(input.problem);
    for (const key of ONE_LINE) {
      const value = input.message[key];
      if (value !== undefined && /[\r\n\0]/.test(value)) throw new NodeFailedError(`${key} holds a line break: it must be one line`);
    }
    if (!input.message.to.trim()) throw new NodeFailedError('to is empty: name at least one recipient');
    for (const key of ['text', 'html'] as const) {
      if ((input.message[key]?.length ?? 0) > SEND_EMAIL_LIMITS.maxBodyChars)
        throw new NodeFailedError(`the ${key} body is longer than ${SEND_EMAIL_LIMITS.maxBodyChars} characters`);
    }
    if (!ctx.ports.mail) throw new NodeFailedError('this engine has no mail sender configured');
    const receipt = await ctx.ports.mail.send(input.server, input.message, { timeoutMs: input.timeoutMs, signal: ctx.signal });
    return { output: receipt };
  },
};

export function renderSendEmail(params: SendEmailParams, renderer: TemplateRenderer): SendEmailInput {
  const { fields } = renderer.typedCredential(params.credential, ['smtp']);
  const server: MailServer = {
    host: fields.host!,
    port: Number(fields.port),
    security: fields.secure as SmtpSecurity,
    ...(fields.user ? { user: fields.user } : {}),
    ...(fields.password ? { password: fields.password } : {}),
  };
  const optional = (template: string | undefined) => (template === undefined ? undefined : renderer.renderString(template).trim() || undefined);
  let problem: string | undefined;
  let attachments: MailMessage['attachments'] = [];
  try {
    attachments = renderAttachments(params.attachments ?? [], renderer);
  } catch (err) {
    if (!(err instanceof NodeFailedError)) throw err;
    problem = err.message;
  }
  const message: MailMessage = {
    from: fields.from!,
    to: renderer.renderString(params.to).trim(),
    subject: renderer.renderString(params.subject),
    attachments,
  };
  const extra = { cc: optional(params.cc), bcc: optional(params.bcc), replyTo: optional(params.replyTo) };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) message[key as keyof typeof extra] = value;
  if (params.text !== undefined) message.text = asText(renderer.renderDeep(params.text));
  if (params.html !== undefined) message.html = asText(renderer.renderDeep(params.html));
  return {
    credential: params.credential,
    server,
    message,
    timeoutMs: Math.min(params.timeoutMs ?? SEND_EMAIL_LIMITS.defaultTimeoutMs, SEND_EMAIL_LIMITS.maxTimeoutMs),
    ...(problem ? { problem } : {}),
  };
}

function renderAttachments(list: NonNullable<SendEmailParams['attachments']>, renderer: TemplateRenderer): MailMessage['attachments'] {
  let total = 0;
  return list.map((a, i) => {
    const filename = renderer.renderString(a.filename).trim();
    if (!filename || /[\r\n\0/\\]/.test(filename)) throw new NodeFailedError(`attachments[${i}].filename must be a file name (no line break or slash)`);
    const raw = renderer.renderDeep(a.content);
    let content: Buffer;
    if (a.encoding === 'base64') {
      if (typeof raw !== 'string' || !BASE64.test(raw)) throw new NodeFailedError(`attachments[${i}] (${filename}): the content is not base64`);
      content = Buffer.from(raw, 'base64');
    } else content = Buffer.from(asText(raw), 'utf8');
    total += content.length;
    if (total > SEND_EMAIL_LIMITS.maxAttachmentBytes)
      throw new NodeFailedError(`attachments are larger than ${SEND_EMAIL_LIMITS.maxAttachmentBytes} bytes in all (at ${filename})`);
    return { filename, content, ...(a.contentType ? { contentType: a.contentType } : {}) };
  });
}
