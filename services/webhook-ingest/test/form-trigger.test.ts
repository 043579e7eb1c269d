// The hosted form (docs/triggers.md, "Form") over real HTTP, with a fake trigger directory and the real
// embedded event bus: GET /form/<id> renders the page (token, cookie, honeypot, CSP), a valid
// submission publishes its fields as the trigger data and answers the thank-you page (or the
// redirect), a filled honeypot answers the same and publishes nothing, a missing, forged, foreign or
// expired token is a 403 page, the address limit a 429 page, server-side validation a 422 page with
// the values kept, and everything from the definition or the submission is escaped.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Check } from 'typebox/value';
import { TRIGGER_TYPES, type FormTriggerConfig, type TriggerEvent } from '@flowdesk/contracts';
import { until } from '@flowdesk/service-kit/testing';
import { startIngest, type IngestStack } from './helpers/ingest.ts';
import { FORM_TOKEN_TTL_MS } from '../src/domain/form-token.ts';

const PER_MINUTE = 4;
let ingest: IngestStack;
let base: string;
let nowMs = Date.parse('2026-12-04T10:00:00Z');
const received: TriggerEvent[] = [];

const CONTACT: FormTriggerConfig = {
  title: 'Contact us',
  description: 'We answer within a day.\nNo spam, promised.',
  fields: [
    { name: 'name', label: 'Your name', type: 'text', required: true },
    { name: 'email', label: 'Email', type: 'email', required: true, help: 'We reply to this address.' },
    { name: 'seats', label: 'Seats', type: 'number' },
    { name: 'start', label: 'Start date', type: 'date' },
    { name: 'topic', label: 'Topic', type: 'select', required: true, options: ['Quote', 'Demo', 'Support'] },
    { name: 'message', label: 'Message', type: 'textarea' },
  ],
  thankYou: 'Thanks, we will be in touch.',
};

before(async () => {
  ingest = await startIngest({
    onTrigger: (m) => void received.push(m.value),
    app: { clock: () => new Date(nowMs), forms: { submissionsPerMinute: PER_MINUTE } },
  });
  base = ingest.base;
});
after(() => ingest.close());
// A fresh minute for the address limit and a fresh directory cache for every test.
beforeEach(() => {
  nowMs += 120_000;
});

interface Page {
  status: number;
  headers: Headers;
  html: string;
}
async function get(path: string, cookie?: string): Promise<Page> {
  const res = await fetch(`${base}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  return { status: res.status, headers: res.headers, html: await res.text() };
}
/** Opens the form as a browser does: its page, the cookie it set, the token in its hidden field. */
async function open(id: string): Promise<{ page: Page; cookie: string; token: string }> {
  const page = await get(`/form/${id}`);
  assert.equal(page.status, 200, page.html);
  const set = page.headers.getSetCookie()[0] ?? '';
  const token = /name="_token" value="([^"]+)"/.exec(page.html)?.[1];
  assert.ok(token, 'the page carries a token');
  return { page, cookie: set.split(';')[0]!, token };
}
async function submit(id: string, fields: Record<string, string>, cookie?: string, headers: Record<string, string> = {}): Promise<Page> {
  const res = await fetch(`${base}/form/${id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
}
const eventsOf = (workflowId: string) => received.filter((e) => e.workflowId === workflowId);
const eventOf = (workflowId: string, n = 1) =>
  until(`event ${n} of ${workflowId}`, () => (eventsOf(workflowId).length >= n ? eventsOf(workflowId) : undefined));
const GOOD = { name: '  Ada Lovelace ', email: 'ada@example.com', seats: '3', start: '2026-12-24', topic: 'Demo', message: '  Call me\r\nplease ' };

/** Nothing was published for `id` before this point: a valid submission now is its first event (one key keeps its order). */
async function assertNothingPublished(id: string) {
  const { cookie, token } = await open(id);
  nowMs += 60_000; // out of the address window the refused posts used
  assert.equal((await submit(id, { ...GOOD, name: 'Marker', _token: token }, cookie)).status, 303);
  await until('the marker submission', () => eventsOf(id).find((e) => e.payload.name === 'Marker'));
  assert.deepEqual(
    eventsOf(id).map((e) => e.payload.name),
    ['Marker'],
    'only the valid submission was published',
  );
}

describe('the page', () => {
  test('GET renders the form: labels, required fields, help, the select’s options, a token, a honeypot; a SameSite=Strict cookie; no script allowed', async () => {
    const f = ingest.addForm(CONTACT);
    const { page, cookie } = await open(f.workflowId);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src/);
    assert.doesNotMatch(page.html, /<script/i);
    const set = page.headers.getSetCookie()[0] ?? '';
    assert.match(set, new RegExp(`^fd_form=[A-Za-z0-9_-]{22}; Path=/form/${f.workflowId}; Max-Age=\\d+; HttpOnly; SameSite=Strict$`));
    assert.ok(cookie.startsWith('fd_form='));
    assert.match(page.html, /<title>Contact us<\/title>/);
    assert.match(page.html, /<h1>Contact us<\/h1>/);
    assert.match(page.html, /We answer within a day\.<br>No spam, promised\./);
    assert.match(page.html, /<label for="f-name">Your name <span class="req" aria-hidden="true">\*<\/span><\/label>/);
    assert.match(page.html, /<input id="f-name" name="name" required type="text"/);
    assert.match(page.html, /<input id="f-email" name="email" required aria-describedby="f-email-help" type="email"/);
    assert.match(page.html, /<p class="help" id="f-email-help">We reply to this address\.<\/p>/);
    assert.match(page.html, /<input id="f-seats" name="seats" type="number" step="any"/);
    assert.match(page.html, /<input id="f-start" name="start" type="date"/);
    assert.match(page.html, /<select id="f-topic" name="topic" required><option value="">Choose…<\/option><option value="Quote">Quote<\/option>/);
    assert.match(page.html, /<textarea id="f-message" name="message" rows="5"/);
    assert.match(
      page.html,
      /<div class="hp" aria-hidden="true"><label for="f-_website">Leave this field empty<\/label><input id="f-_website" name="_website" type="text" tabindex="-1" autocomplete="off">/,
    );
    assert.match(page.html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);

    // A second page in the same browser keeps its nonce (two tabs both submit), the cookie renewed.
    const again = await get(`/form/${f.workflowId}`, cookie);
    assert.equal(again.headers.getSetCookie()[0]?.split(';')[0], cookie);
  });

  test('unknown, inactive, not-a-form, non-UUID and not-valid forms are one 404 page, for GET and POST', async () => {
    const inactive = ingest.addForm(CONTACT, { active: false });
    const broken = ingest.addForm({ title: 'Broken', fields: [] });
    for (const id of [inactive.workflowId, broken.workflowId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      for (const path of [`/form/${id}`, `/form/${id}/thanks`]) {
        const page = await get(path);
        assert.equal(page.status, 404, path);
        assert.match(page.headers.get('content-type') ?? '', /text\/html/, path);
        assert.match(page.html, /<h1>Form not found<\/h1>/, path);
      }
      assert.equal((await submit(id, { name: 'x' })).status, 404, id);
    }
    // Deactivated after its page was opened: the submission is refused and starts nothing.
    const f = ingest.addForm(CONTACT);
    const { cookie, token } = await open(f.workflowId);
    ingest.forms.get(f.workflowId)!.active = false;
    nowMs += 5_000; // past the directory's cache
    assert.equal((await submit(f.workflowId, { ...GOOD, _token: token }, cookie)).status, 404);
    await new Promise((r) => setImmediate(r));
    assert.equal(eventsOf(f.workflowId).length, 0);
  });
});

describe('submitting', () => {
  test('a valid submission publishes the fields (trimmed, a number as a number) and submittedAt, and answers the thank-you page', async () => {
    const f = ingest.addForm(CONTACT);
    const { cookie, token } = await open(f.workflowId);
    const res = await submit(f.workflowId, { ...GOOD, unknown: 'ignored', _token: token, _website: '' }, cookie, { 'user-agent': 'test' });
    assert.equal(res.status, 303, res.html);
    assert.equal(res.headers.get('location'), `/form/${f.workflowId}/thanks`);
    const [event] = await eventOf(f.workflowId);
    assert.equal(event!.source, 'form');
    assert.equal(event!.ownerId, f.ownerId);
    assert.deepEqual(event!.payload, {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      seats: 3,
      start: '2026-12-24',
      topic: 'Demo',
      message: '  Call me\r\nplease ',
      submittedAt: new Date(nowMs).toISOString(),
    });
    assert.deepEqual(event!.headers, {}, 'no headers, no cookie, no address');
    // The payload is the registry's form payload, with the example's keys for these settings.
    assert.ok(Check(TRIGGER_TYPES.form.payload, event!.payload));
    assert.deepEqual(Object.keys(event!.payload).sort(), Object.keys(TRIGGER_TYPES.form.example(CONTACT, new Date())).sort());

    const thanks = await get(res.headers.get('location')!);
    assert.equal(thanks.status, 200);
    assert.match(thanks.html, /<p role="status">Thanks, we will be in touch\.<\/p>/);

    // The same page sent again (a double click, a resend): the same event id, so the engine runs it once.
    assert.equal((await submit(f.workflowId, { ...GOOD, _token: token }, cookie)).status, 303);
    const both = await eventOf(f.workflowId, 2);
    assert.equal(both[1]!.eventId, both[0]!.eventId);
    // A new page is a new submission.
    const next = await open(f.workflowId);
    assert.equal((await submit(f.workflowId, { ...GOOD, _token: next.token }, next.cookie)).status, 303);
    const three = await eventOf(f.workflowId, 3);
    assert.notEqual(three[2]!.eventId, three[0]!.eventId);
  });

  test('optional fields left empty: "" for text, null for a number; a redirect URL instead of the thank-you page', async () => {
    const f = ingest.addForm({ ...CONTACT, thankYou: undefined, redirectUrl: 'https://example.com/thanks?from=form' });
    const { page, cookie, token } = await open(f.workflowId);
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/example\.com;/);
    const res = await submit(
      f.workflowId,
      { name: 'Grace', email: 'grace@example.com', seats: '', start: '', topic: 'Quote', message: '', _token: token },
      cookie,
    );
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), 'https://example.com/thanks?from=form');
    const [event] = await eventOf(f.workflowId);
    assert.deepEqual(event!.payload, {
      name: 'Grace',
      email: 'grace@example.com',
      seats: null,
      start: '',
      topic: 'Quote',
      message: '',
      submittedAt: new Date(nowMs).toISOString(),
    });
  });

  test('a filled honeypot answers as a submission does, and starts nothing', async () => {
    const f = ingest.addForm(CONTACT);
    const { cookie, token } = await open(f.workflowId);
    const res = await submit(f.workflowId, { ...GOOD, _website: 'http://spam.example', _token: token }, cookie);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), `/form/${f.workflowId}/thanks`);
    await assertNothingPublished(f.workflowId);
  });

  test('CSRF: no token, no cookie, a forged token, another visitor’s or another form’s token, an expired one: 403 page, nothing published', async () => {
    const f = ingest.addForm(CONTACT);
    const other = ingest.addForm(CONTACT);
    const mine = await open(f.workflowId);
    const theirs = await open(f.workflowId);
    const foreign = await open(other.workflowId);
    const [at, pageId, sig] = mine.token.split('.') as [string, string, string];
    const forged = `${at}.${pageId}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
    const cases: [string, Record<string, string>, string | undefined][] = [
      ['no token', { ...GOOD }, mine.cookie],
      ['no cookie (a cross-site post: the SameSite=Strict cookie is not sent)', { ...GOOD, _token: mine.token }, undefined],
      ['a forged signature', { ...GOOD, _token: forged }, mine.cookie],
      ['another issue time', { ...GOOD, _token: `${Number(at) - 1}.${pageId}.${sig}` }, mine.cookie],
      ['another page id', { ...GOOD, _token: `${at}.${pageId.slice(1)}A.${sig}` }, mine.cookie],
      ['another visitor’s token', { ...GOOD, _token: theirs.token }, mine.cookie],
      ['another form’s token', { ...GOOD, _token: foreign.token }, foreign.cookie],
      ['garbage', { ...GOOD, _token: 'x' }, mine.cookie],
    ];
    for (const [what, fields, cookie] of cases) {
      const res = await submit(f.workflowId, fields, cookie);
      assert.equal(res.status, 403, what);
      assert.match(res.html, /did not come from the form page/, what);
      assert.match(res.html, new RegExp(`<a href="/form/${f.workflowId}">Open the form</a>`), what);
      nowMs += 60_000; // each case in its own address window
    }
    const expiring = await open(f.workflowId);
    nowMs += FORM_TOKEN_TTL_MS + 1;
    const expired = await submit(f.workflowId, { ...GOOD, _token: expiring.token }, expiring.cookie);
    assert.equal(expired.status, 403);
    assert.match(expired.html, /open too long/);
    await assertNothingPublished(f.workflowId);
  });

  test('server-side validation: 422 with a message at each field, the values kept, the first invalid field focused; nothing published', async () => {
    const f = ingest.addForm(CONTACT);
    const { cookie, token } = await open(f.workflowId);
    const res = await submit(
      f.workflowId,
      { name: '   ', email: 'ada@', seats: 'three', start: '2026-02-30', topic: 'Bribe', message: 'kept as typed', _token: token },
      cookie,
    );
    assert.equal(res.status, 422);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.html, /<title>Check the form: Contact us<\/title>/);
    assert.match(res.html, /<div class="summary" role="alert">\n<h2>5 fields need your attention<\/h2>/);
    assert.match(res.html, /<a href="#f-name">Your name: Fill in this field\.<\/a>/);
    for (const [field, message] of [
      ['name', 'Fill in this field.'],
      ['email', 'Enter an email address, like name@example.com.'],
      ['seats', 'Enter a number, like 42 or 3.5.'],
      ['start', 'Enter a date as YYYY-MM-DD, like 2026-12-24.'],
      ['topic', 'Choose one of the options.'],
    ])
      assert.match(res.html, new RegExp(`<p class="error" id="f-${field}-error">${message!.replace(/[.]/g, '\\.')}</p>`), field);
    assert.match(res.html, /<input id="f-name" name="name" required aria-invalid="true" aria-describedby="f-name-error" autofocus type="text" value=""/);
    assert.match(
      res.html,
      /<input id="f-email" name="email" required aria-invalid="true" aria-describedby="f-email-help f-email-error" type="email" value="ada@"/,
    );
    assert.match(res.html, /<input id="f-start"[^>]* value="2026-02-30"/);
    assert.match(res.html, /<textarea id="f-message" name="message" rows="5" maxlength="10000">kept as typed<\/textarea>/);
    assert.equal((res.html.match(/autofocus/g) ?? []).length, 1, 'one field focused');
    // The re-rendered page carries a fresh token for the same visitor: corrected, it submits.
    const fresh = /name="_token" value="([^"]+)"/.exec(res.html)![1]!;
    assert.notEqual(fresh, token);
    nowMs += 1_000;
    assert.equal((await submit(f.workflowId, { ...GOOD, _token: fresh }, cookie)).status, 303);
    const [event] = await eventOf(f.workflowId);
    assert.equal(event!.payload.topic, 'Demo', 'the first event is the corrected submission: the invalid one published nothing');
  });

  test(`more than ${PER_MINUTE} submissions a minute from one address: a 429 page with Retry-After; other forms and the next minute are not affected`, async () => {
    const f = ingest.addForm(CONTACT);
    const other = ingest.addForm(CONTACT);
    const { cookie, token } = await open(f.workflowId);
    // Invalid and forged posts count too: the limit is on what an address sends.
    for (let i = 0; i < PER_MINUTE; i++) assert.notEqual((await submit(f.workflowId, { name: '', _token: token }, cookie)).status, 429, `post ${i + 1}`);
    const limited = await submit(f.workflowId, { ...GOOD, _token: token }, cookie);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.match(limited.html, /<h1>Too many submissions<\/h1>/);
    assert.match(limited.html, /Wait 60 seconds/);
    const elsewhere = await open(other.workflowId);
    assert.equal((await submit(other.workflowId, { ...GOOD, _token: elsewhere.token }, elsewhere.cookie)).status, 303, 'another form is not limited');
    nowMs += 60_000;
    assert.equal((await submit(f.workflowId, { ...GOOD, _token: token }, cookie)).status, 303, 'the next minute is');
    await eventOf(f.workflowId);
  });

  test('not a form post: a JSON body is a 415 page, a body over 256 KiB a 413 page', async () => {
    const f = ingest.addForm(CONTACT);
    const json = await fetch(`${base}/form/${f.workflowId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    assert.equal(json.status, 415);
    assert.match(json.headers.get('content-type') ?? '', /text\/html/);
    const big = await submit(f.workflowId, { message: 'a'.repeat(300 * 1024) });
    assert.equal(big.status, 413);
    assert.match(big.html, /larger than 256 KiB/);
  });
});

describe('escaping', () => {
  const XSS = '<script>alert(1)</script>"><img src=x onerror=alert(2)>\'';
  test('the definition’s texts and the submitted values are escaped wherever they appear', async () => {
    const f = ingest.addForm({
      title: `Title ${XSS}`,
      description: `Desc ${XSS}`,
      submitLabel: `Send ${XSS}`.slice(0, 50),
      fields: [
        { name: 'a', label: `Label ${XSS}`, type: 'text', required: true, help: `Help ${XSS}` },
        { name: 'b', label: 'Choice', type: 'select', options: [`Opt ${XSS}`] },
        { name: 'c', label: 'Text', type: 'textarea' },
        { name: 'd', label: 'Mail', type: 'email' },
      ],
      thankYou: `Thanks ${XSS}`,
    });
    const { page, cookie, token } = await open(f.workflowId);
    // Nothing of the injected markup survives as markup: no element, no attribute, no early end of a textarea.
    const bad = /<script|<img|onerror=alert\(\d\)>/i;
    const textareaEnds = (html: string) => (html.match(/<\/textarea>/g) ?? []).length;
    assert.doesNotMatch(page.html, bad);
    assert.match(page.html, /<h1>Title &lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&gt;&lt;img src=x onerror=alert\(2\)&gt;&#39;<\/h1>/);
    assert.match(page.html, /<option value="Opt &lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&gt;&lt;img src=x onerror=alert\(2\)&gt;&#39;">/);
    // A value sent back: in an attribute, in a textarea, in a select.
    const res = await submit(f.workflowId, { a: '', b: `Opt ${XSS}`, c: `</textarea>${XSS}`, d: `"><script>alert(3)</script>`, _token: token }, cookie);
    assert.equal(res.status, 422);
    assert.doesNotMatch(res.html, bad);
    assert.equal(textareaEnds(res.html), 1);
    assert.match(res.html, /value="&quot;&gt;&lt;script&gt;alert\(3\)&lt;\/script&gt;"/);
    assert.match(res.html, /<textarea[^>]*>&lt;\/textarea&gt;&lt;script&gt;/);
    assert.match(res.html, /<option value="Opt [^"]*" selected>/);
    const thanks = await get(`/form/${f.workflowId}/thanks`);
    assert.doesNotMatch(thanks.html, bad);
    assert.match(thanks.html, /Thanks &lt;script&gt;/);
  });
});
