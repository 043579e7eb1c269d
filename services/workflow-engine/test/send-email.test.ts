// Send Email node (docs/workflow-engine.md, "Send Email") against real SMTP servers started here
// (smtp-server), what arrived read back with mailparser: templated recipients, subject, bodies and an
// attachment from an earlier step; STARTTLS with a self-signed certificate made for this test, trusted
// only through the mailer's explicit `ca` (SMTP_TLS_CA_FILE); a wrong password failing the step; the
// SSRF guard refusing a private server unless the allowlist names it; the connection time-out; the
// attachment limit.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { selfSignedCertificate } from '@flowdesk/service-kit/testing';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { parseAllowlist, SsrfPolicy } from '@flowdesk/service-kit';
import { createSmtpMailer, type SmtpMailerOptions } from '../src/adapters/smtp-mailer.ts';
import { NetworkError, NodeFailedError, RequestTimeoutError, SsrfBlockedError } from '../src/domain/errors.ts';
import { sendEmailHandler, type SendEmailParams } from '../src/domain/nodes/send-email.ts';
import type { CredentialValue } from '../src/domain/ports.ts';
import { TemplateRenderer } from '../src/domain/template.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { SEND_EMAIL_LIMITS, TRIGGER_TOPIC } from '@flowdesk/contracts';
import { generateSigningKeys, listen } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { fixedClock, silentLog, startEngineStack, userCaller, webhookEvent } from './support.ts';

const USER = 'robot';
const PASSWORD = 'correct horse battery';

interface Arrived {
  mail: ParsedMail;
  rcptTo: string[];
  secure: boolean;
}

/** A real SMTP server on loopback that checks the login and keeps what arrived. */
async function startSmtp(options: Partial<SMTPServerOptions> = {}) {
  const arrived: Arrived[] = [];
  const waiters: (() => void)[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    logger: false,
    onConnect: (_session, cb) => {
      connections++;
      cb();
    },
    onAuth: (auth, _session, cb) =>
      auth.username === USER && auth.password === PASSWORD ? cb(null, { user: USER }) : cb(new Error('Invalid username or password')),
    onData: (stream, session, cb) => {
      simpleParser(stream)
        .then((mail) => {
          arrived.push({ mail, rcptTo: session.envelope.rcptTo.map((r) => r.address), secure: session.secure });
          waiters.splice(0).forEach((w) => w());
          cb();
        })
        .catch(cb);
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    arrived,
    connections: () => connections,
    /** Resolves once `n` mails have arrived (a condition, not a sleep). */
    until: (n: number) => (arrived.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(() => arrived.length >= n && resolve()))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let plain: Awaited<ReturnType<typeof startSmtp>>;
let starttls: Awaited<ReturnType<typeof startSmtp>>;
let silent: Server;
const silentSockets: Socket[] = [];
let cert: string;
const certDir = mkdtempSync(path.join(tmpdir(), 'smtp-cert-'));

before(async () => {
  const pem = selfSignedCertificate(certDir);
  cert = pem.cert;
  plain = await startSmtp({ disabledCommands: ['STARTTLS'] });
  starttls = await startSmtp({ key: pem.key, cert });
  // Accepts connections and never greets: the connection time-out's server.
  silent = createServer((s) => void silentSockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  await plain.close();
  await starttls.close();
  silentSockets.forEach((s) => s.destroy());
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  rmSync(certDir, { recursive: true, force: true });
});

const loopback = new SsrfPolicy(parseAllowlist('127.0.0.1'));

const smtp = (port: number, fields: Record<string, string> = {}): CredentialValue => ({
  type: 'smtp',
  fields: { host: '127.0.0.1', port: String(port), secure: 'none', user: USER, password: PASSWORD, from: 'Flowdesk <robot@flowdesk.test>', ...fields },
});

async function send(params: Partial<SendEmailParams>, credential: CredentialValue, mailer: SmtpMailerOptions = { policy: loopback }) {
  const renderer = new TemplateRenderer({
    sandbox: inProcessSandbox,
    payload: { customer: { name: 'Ada Lovelace', email: 'ada@example.test' }, order: 42 },
    headers: {},
    nodes: new Map<string, unknown>([
      ['export', { body: 'sku,qty\nA-1,3\n' }],
      ['logo', { base64: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]).toString('base64') }],
    ]),
    credentials: new Map([['mail', credential]]),
  });
  const input = sendEmailHandler.render(
    { credential: 'mail', to: '{{trigger.customer.email}}', subject: 'Order {{trigger.order}}', text: 'Hello', ...params },
    renderer,
  );
  const ctx = {
    ports: {
      http: undefined as never,
      sandbox: inProcessSandbox,
      mail: createSmtpMailer(mailer),
      createTask: async () => ({}),
      clock: fixedClock(),
      log: silentLog,
    },
    ownerId: 'u1',
    signal: new AbortController().signal,
    warn: () => {},
  };
  try {
    return { result: await sendEmailHandler.execute(input, ctx), masked: sendEmailHandler.mask(input) };
  } catch (error) {
    return { error: error as Error, masked: sendEmailHandler.mask(input) };
  }
}

describe('Send Email through a real SMTP server', () => {
  test('the mail arrives with the templated recipients, subject, bodies, reply-to and attachments; output messageId, accepted, rejected', async () => {
    const before = plain.arrived.length;
    const r = await send(
      {
        cc: 'Boss <boss@example.test>',
        bcc: 'audit@example.test',
        replyTo: 'support+{{trigger.order}}@example.test',
        text: 'Dear {{trigger.customer.name}}, your order {{trigger.order}} shipped.',
        html: '<p>Dear <b>{{trigger.customer.name}}</b></p>',
        attachments: [
          { filename: 'order-{{trigger.order}}.csv', content: '{{nodes.export.body}}', contentType: 'text/csv' },
          { filename: 'logo.png', content: '{{nodes.logo.base64}}', encoding: 'base64', contentType: 'image/png' },
        ],
      },
      smtp(plain.port),
    );
    assert.equal(r.error, undefined, String(r.error));
    await plain.until(before + 1);
    const got = plain.arrived[before]!;
    assert.equal(got.mail.subject, 'Order 42');
    assert.equal(got.mail.text?.trim(), 'Dear Ada Lovelace, your order 42 shipped.');
    assert.equal(got.mail.html, '<p>Dear <b>Ada Lovelace</b></p>');
    assert.deepEqual(
      (Array.isArray(got.mail.to) ? got.mail.to : [got.mail.to]).flatMap((a) => a!.value.map((v) => v.address)),
      ['ada@example.test'],
    );
    assert.equal((got.mail.cc as { value: { address: string }[] }).value[0]!.address, 'boss@example.test');
    assert.equal(got.mail.replyTo?.value[0]!.address, 'support+42@example.test');
    assert.equal(got.mail.from?.value[0]!.address, 'robot@flowdesk.test', 'the From of the credential');
    assert.deepEqual(got.rcptTo.sort(), ['ada@example.test', 'audit@example.test', 'boss@example.test'], 'bcc is in the envelope');
    assert.equal(got.mail.headers.get('bcc'), undefined, 'and not in the headers');
    assert.deepEqual(
      got.mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString('base64')]),
      [
        ['order-42.csv', 'text/csv', Buffer.from('sku,qty\nA-1,3\n').toString('base64')],
        ['logo.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]).toString('base64')],
      ],
    );
    const out = r.result?.output as { messageId: string; accepted: string[]; rejected: string[] };
    assert.match(out.messageId, /^<.+@.+>$/);
    assert.equal(got.mail.messageId, out.messageId);
    assert.deepEqual(out.accepted.sort(), ['ada@example.test', 'audit@example.test', 'boss@example.test']);
    assert.deepEqual(out.rejected, []);
    const recorded = JSON.stringify(r.masked);
    assert.ok(!recorded.includes(PASSWORD), 'the recorded input holds no password');
    assert.match(recorded, /"bytes":14/, 'attachments are recorded by size');
  });

  test('STARTTLS with a self-signed certificate: refused by default, accepted when the mailer is given it as ca', async () => {
    const refused = await send({}, smtp(starttls.port, { secure: 'starttls' }));
    assert.ok(refused.error instanceof NodeFailedError, String(refused.error));
    assert.match(refused.error.message, /TLS with the SMTP server 127\.0\.0\.1:\d+ failed: .*self[- ]signed/i);
    const before = starttls.arrived.length;
    const ok = await send({}, smtp(starttls.port, { secure: 'starttls' }), { policy: loopback, ca: cert });
    assert.equal(ok.error, undefined, String(ok.error));
    await starttls.until(before + 1);
    assert.equal(starttls.arrived[before]!.secure, true, 'the mail travelled over TLS');
  });

  test('starttls is required: a server that does not offer it fails the step instead of sending in clear', async () => {
    const before = plain.arrived.length;
    const r = await send({}, smtp(plain.port, { secure: 'starttls' }));
    assert.ok(r.error instanceof NodeFailedError, String(r.error));
    assert.equal(plain.arrived.length, before);
  });

  test('a wrong password fails the step with a clear error', async () => {
    const before = plain.arrived.length;
    const r = await send({}, smtp(plain.port, { password: 'wrong' }));
    assert.ok(r.error instanceof NodeFailedError, String(r.error));
    assert.match(r.error.message, /^the SMTP server 127\.0\.0\.1:\d+ refused the login of "robot": 535/);
    assert.ok(!r.error.message.includes('wrong'));
    assert.equal(plain.arrived.length, before);
  });

  test('the SSRF guard: a loopback or private server is refused unless SSRF_ALLOWLIST names it; nothing connects', async () => {
    const connections = plain.connections();
    const literal = await send({}, smtp(plain.port), { policy: new SsrfPolicy() });
    assert.ok(literal.error instanceof SsrfBlockedError, String(literal.error));
    assert.match(literal.error.message, /refused by the SSRF guard: 127\.0\.0\.1 is a loopback address/);
    // A name that resolves to a private address is refused too (the resolved address is what is checked).
    const named = await send({}, smtp(plain.port, { host: 'smtp.internal.test' }), {
      policy: new SsrfPolicy(),
      resolve: async () => [{ address: '10.1.2.3', family: 4 }],
    });
    assert.ok(named.error instanceof SsrfBlockedError, String(named.error));
    assert.match(named.error.message, /smtp\.internal\.test resolves to 10\.1\.2\.3/);
    assert.equal(plain.connections(), connections, 'no connection was opened');
    // The same allowlist entry HTTP Request honours lets it through.
    const allowed = await send({}, smtp(plain.port), { policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${plain.port}`)) });
    assert.equal(allowed.error, undefined, String(allowed.error));
  });

  test('a server that never greets: the connection time-out fails the step', async () => {
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    const r = await send({}, smtp(port), { policy: loopback, connectTimeoutMs: 300 });
    assert.ok(r.error instanceof RequestTimeoutError || r.error instanceof NetworkError, String(r.error));
    assert.match(r.error.message, /127\.0\.0\.1:\d+/);
    assert.ok(Date.now() - started < 5_000, 'within the time-out, not the send limit');
  });

  test(`attachments over ${SEND_EMAIL_LIMITS.maxAttachmentBytes} bytes in all, bad base64, or a line break in a recipient: the step fails, nothing is sent`, async () => {
    const connections = plain.connections();
    const big = Buffer.alloc(SEND_EMAIL_LIMITS.maxAttachmentBytes / 2 + 1).toString('base64');
    const over = await send(
      {
        attachments: [
          { filename: 'a.bin', content: big, encoding: 'base64' },
          { filename: 'b.bin', content: big, encoding: 'base64' },
        ],
      },
      smtp(plain.port),
    );
    assert.ok(over.error instanceof NodeFailedError);
    assert.match(over.error.message, /attachments are larger than 5242880 bytes in all \(at b\.bin\)/);
    const bad = await send({ attachments: [{ filename: 'x', content: 'not base64!', encoding: 'base64' }] }, smtp(plain.port));
    assert.match(String(bad.error), /content is not base64/);
    const injected = await send({ to: 'a@example.test\r\nBcc: victim@example.test' }, smtp(plain.port));
    assert.match(String(injected.error), /to holds a line break/);
    assert.equal(plain.connections(), connections);
  });
});

describe('Send Email in a run of the engine', () => {
  test('an smtp credential from the API, a mail sent by a run, the password nowhere in the recorded run', async () => {
    const keys = generateSigningKeys();
    const stack = await startEngineStack({ keys });
    const engine = await buildApp({
      bus: stack.bus,
      db: stack.testDb.db,
      jwtPublicKeyPem: keys.publicKeyPem,
      http: stack.http,
      mail: createSmtpMailer({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${plain.port}`)) }),
      workspace: stack.workspace,
      credentialsKey: { key: randomBytes(32), keyId: 'k1' },
      logLevel: 'silent',
    });
    try {
      const engineUrl = await listen(engine, 0);
      const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
      const owner = randomUUID();
      const created = await call(owner, 'POST', '/api/v1/credentials', {
        name: 'mail',
        type: 'smtp',
        fields: { host: '127.0.0.1', port: String(plain.port), secure: 'none', user: USER, password: PASSWORD, from: 'robot@flowdesk.test' },
      });
      assert.equal(created.status, 201, created.text);
      const wf = await call(owner, 'POST', '/api/v1/workflows', {
        name: 'Mail the customer',
        triggerType: 'webhook',
        active: true,
        graph: {
          nodes: [
            { id: 'mail', type: 'send_email', params: { credential: 'mail', to: '{{trigger.email}}', subject: 'Hi {{trigger.name}}', text: 'Welcome.' } },
          ],
          edges: [{ from: 'trigger', to: 'mail' }],
        },
      });
      assert.equal(wf.status, 201, wf.text);
      const before = plain.arrived.length;
      await stack.bus.publish(TRIGGER_TOPIC, [{ key: wf.body.id, value: webhookEvent(wf.body, owner, { email: 'grace@example.test', name: 'Grace' }) }]);
      await plain.until(before + 1);
      assert.equal(plain.arrived[before]!.mail.subject, 'Hi Grace');
      let run: any;
      for (const deadline = Date.now() + 20_000; !run;) {
        const runs = await call(owner, 'GET', `/api/v1/workflows/${wf.body.id}/runs?limit=1`);
        const done = (runs.body.items as any[]).find((r) => r.status !== 'running' && r.status !== 'queued');
        if (done) run = (await call(owner, 'GET', `/api/v1/workflow-runs/${done.id}`)).body;
        else if (Date.now() > deadline) throw new Error('no finished run');
        else await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.steps[0].output.accepted, ['grace@example.test']);
      assert.equal(run.steps[0].input.credential, 'mail');
      assert.ok(!JSON.stringify(run).includes(PASSWORD), 'the password is nowhere in the recorded run');
    } finally {
      await engine.close();
      await stack.close();
    }
  });
});
