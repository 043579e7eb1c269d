import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { CREDENTIAL_NAME_PATTERN } from '../entities/credentials.ts';
import { defineNode, Templated } from './define.ts';

/**
 * Limits of a Send Email node (docs/workflow-engine.md, "Send Email"): recipients over to, cc and bcc;
 * attachments per mail and their total decoded size; each rendered body; the send's time limit.
 */
export const SEND_EMAIL_LIMITS = {
  maxRecipients: 50,
  maxAttachments: 10,
  maxAttachmentBytes: 5 * 1024 * 1024,
  maxBodyChars: 1_000_000,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 120_000,
  connectTimeoutMs: 10_000,
} as const;

const Attachment = Type.Object(
  {
    filename: Templated(255),
    /** Usually one variable: `{{nodes.<id>.body}}` (an earlier step's text, or base64 with encoding base64). */
    content: Templated(10_000),
    encoding: Type.Optional(StringEnum(['text', 'base64'])),
    contentType: Type.Optional(Type.String({ maxLength: 200, pattern: '^[\\w.+-]+/[\\w.+-]+$' })),
  },
  { additionalProperties: false },
);

export const sendEmail = defineNode({
  type: 'send_email',
  action: true,
  label: 'Send Email',
  description:
    'Sends an email through the SMTP server of an smtp credential (SSRF-guarded, TLS or STARTTLS), with templated recipients, subject, bodies and attachments; sent once, never retried.',
  idPrefix: 'email',
  icon: 'world-upload',
  color: 'grape',
  params: Type.Object(
    {
      /** A credential of type smtp (Settings → Credentials), by name: the server, login and From address. */
      credential: Type.String({ pattern: CREDENTIAL_NAME_PATTERN }),
      to: Templated(4_000),
      cc: Type.Optional(Templated(4_000)),
      bcc: Type.Optional(Templated(4_000)),
      replyTo: Type.Optional(Templated(500)),
      subject: Templated(1_000),
      text: Type.Optional(Templated(100_000)),
      html: Type.Optional(Templated(100_000)),
      attachments: Type.Optional(Type.Array(Attachment, { maxItems: SEND_EMAIL_LIMITS.maxAttachments })),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 1_000, maximum: SEND_EMAIL_LIMITS.maxTimeoutMs })),
    },
    { additionalProperties: false },
  ),
  fields: {
    credential: {
      label: 'SMTP credential',
      placeholder: 'mail_server',
      trim: true,
      description: 'The name of a credential of type SMTP server (Settings → Credentials): host, port, security, login and From address.',
    },
    to: { label: 'To', template: true, placeholder: '{{trigger.customer.email}}', description: 'Addresses separated by commas.' },
    cc: { label: 'Cc', template: true },
    bcc: { label: 'Bcc', template: true },
    replyTo: { label: 'Reply-To', template: true },
    subject: { label: 'Subject', template: true, placeholder: 'Your order {{trigger.order.id}}' },
    text: { label: 'Text body', template: true, multiline: true },
    html: {
      label: 'HTML body',
      template: true,
      multiline: true,
      description: 'Sent as the HTML part beside the text body; variables are inserted as written (not escaped).',
    },
    attachments: {
      label: 'Attachments (JSON)',
      widget: 'json',
      template: true,
      multiline: true,
      noun: 'attachments',
      placeholder: '[{ "filename": "report.csv", "content": "{{nodes.export.body}}" }]',
      description: `Up to ${SEND_EMAIL_LIMITS.maxAttachments}, ${SEND_EMAIL_LIMITS.maxAttachmentBytes / 1024 / 1024} MiB in all: { filename, content, encoding: text (default) or base64, contentType }.`,
    },
    timeoutMs: { label: 'Timeout (ms)', widget: 'none' },
  },
  output:
    "`{ messageId, accepted, rejected }`: the server's message id and the recipients it accepted and refused. A refused login, a refused connection or every recipient refused fails the node.",
  summary: (p) => `To ${p.to || '…'}: ${p.subject || '(no subject yet)'}`,
});
