// Settings → Credentials in Debian's chromium on a fresh embedded start (docs/credentials.md): add a
// credential, see it listed by name with its {{credentials.<name>}} reference and never its value
// (not in the page, not in any API answer the page received), replace the value, delete it after a
// confirmation. axe-core on each state (no serious or critical violation). A workflow run through
// the embedded stack then uses the credential and records only ••••.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, saveWorkflow, screenshot, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { ACTION_TIMEOUT_MS } from './support/console-session.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };
const SECRET = `sk_live_${randomBytes(18).toString('base64url')}`;
const REPLACED = `sk_live_${randomBytes(18).toString('base64url')}`;

describe('Settings → Credentials in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  /** Every API answer the page received: none may carry a value. */
  const answers: string[] = [];

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    page = await context.newPage();
    page.on('response', (res) => {
      if (res.url().includes('/api/v1/'))
        void res.text().then(
          (t) => answers.push(t),
          () => {},
        );
    });
    // The owner account, as the first-run page creates it.
    await page.goto(base);
    await page.waitForURL(`${base}/setup`);
    await page.getByLabel('Name').fill(owner.name);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').and(page.locator('input')).fill(owner.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${base}/`);
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const valueField = () => page.getByLabel('Value').and(page.locator('input'));
  const rows = () => page.getByRole('table', { name: 'Credentials' }).getByRole('row');

  test('the nav leads to an empty page that explains credentials', async () => {
    await page.getByRole('link', { name: 'Credentials', exact: true }).click();
    await page.waitForURL(`${base}/settings/credentials`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Credentials');
    await page.getByText('No credentials yet').waitFor();
    await assertAccessible(page, 'credentials (empty)');
  });

  test('add one: listed by name with its reference; the value is nowhere in the page or the answers', async () => {
    await page.getByRole('button', { name: 'Add credential' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.getByLabel('Name').fill('crm_token');
    await valueField().fill(SECRET);
    assert.equal(await valueField().getAttribute('type'), 'password', 'the value is typed blind');
    await assertAccessible(page, 'add credential dialog');
    await page.getByRole('button', { name: 'Save credential' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: 'crm_token', exact: true }).waitFor();
    await page.getByText('{{credentials.crm_token}}').waitFor();
    await assertAccessible(page, 'credentials (one)');
    await screenshot(page, 'credentials');
    assert.equal(await rows().count(), 2, 'header + one credential');
    assert.ok(!(await page.content()).includes(SECRET), 'not in the page');
    const listed = await page.request.get(`${base}/api/v1/credentials`);
    assert.equal(listed.status(), 200);
    const body = await listed.json();
    assert.deepEqual(
      body.credentials.map((c: { name: string }) => c.name),
      ['crm_token'],
    );
    assert.ok(!answers.some((a) => a.includes(SECRET)) && !JSON.stringify(body).includes(SECRET), 'no answer carries the value');
  });

  test('a taken name is refused with the reason, in the dialog', async () => {
    await page.getByRole('button', { name: 'Add credential' }).click();
    await page.getByLabel('Name').fill('crm_token');
    await valueField().fill('another-value');
    await page.getByRole('button', { name: 'Save credential' }).click();
    const alert = page.getByRole('dialog').getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /already exists/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  test('replace the value: the field starts empty (write-only) and a run uses the new value, recorded as ••••', async () => {
    await page.getByRole('button', { name: 'Replace the value of crm_token' }).click();
    await page.getByRole('dialog').waitFor();
    assert.equal(await valueField().inputValue(), '', 'never prefilled');
    await valueField().fill(REPLACED);
    await page.getByRole('button', { name: 'Replace value' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.getByText('Replaced the value of “crm_token”.').waitFor();
    assert.ok(!answers.some((a) => a.includes(REPLACED) || a.includes(SECRET)));
  });

  test("the editor's variable picker lists the credential and inserts its reference (no page error on the editor's load)", async () => {
    const session = await (await page.request.get(`${base}/api/v1/session`)).json();
    const created = await page.request.post(`${base}/api/v1/workflows`, {
      data: { name: 'Uses a credential', triggerType: 'webhook' },
      headers: { origin: base, 'x-csrf-token': session.csrfToken },
    });
    assert.equal(created.status(), 201, await created.text());
    await page.goto(`${base}/workflows/${(await created.json()).id}`);
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'HTTP Request' }).click();
    await page.getByLabel('URL').fill('https://crm.example.com/orders?token=');
    await page.getByRole('button', { name: 'Insert {{credentials.crm_token}}' }).click();
    assert.equal(await page.getByLabel('URL').inputValue(), 'https://crm.example.com/orders?token={{credentials.crm_token}}');
    await saveWorkflow(page);
  });

  test('delete asks for confirmation, then the list is empty again', async () => {
    await page.getByRole('link', { name: 'Credentials', exact: true }).click();
    await page.getByRole('button', { name: 'Delete crm_token' }).click();
    const confirm = page.getByRole('dialog');
    await confirm.waitFor();
    assert.match(await confirm.innerText(), /\{\{credentials\.crm_token\}\}/);
    await assertAccessible(page, 'delete credential confirmation');
    await page.getByRole('button', { name: 'Delete credential' }).click();
    await page.getByText('No credentials yet').waitFor();
    const listed = await (await page.request.get(`${base}/api/v1/credentials`)).json();
    assert.deepEqual(listed.credentials, []);
  });

  test('a typed credential: the form shows the fields of the type picked (the registry), the key is write-only, an edit keeps it', async () => {
    const KEY = `key_${randomBytes(18).toString('base64url')}`;
    await page.getByRole('button', { name: 'Add credential' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByLabel(/^Name/).fill('partner_api');
    await dialog.getByLabel('Type').click();
    await page.getByRole('option', { name: 'API key in a header' }).click();
    const headerName = dialog.getByLabel('Header name');
    assert.equal(await headerName.inputValue(), 'X-Api-Key', "the type's default");
    await headerName.fill('X-Partner-Key');
    const keyField = dialog.getByLabel('API key').and(page.locator('input'));
    assert.equal(await keyField.getAttribute('type'), 'password');
    await keyField.fill(KEY);
    await assertAccessible(page, 'add typed credential dialog');
    await dialog.getByRole('button', { name: 'Save credential' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: 'API key in a header' }).waitFor();
    let listed = (await (await page.request.get(`${base}/api/v1/credentials`)).json()).credentials;
    assert.deepEqual(
      listed.map((c: any) => [c.name, c.type, c.fields, c.secrets]),
      [['partner_api', 'header', { headerName: 'X-Partner-Key' }, { value: true }]],
    );

    await page.getByRole('button', { name: 'Edit partner_api' }).click();
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('Header name').inputValue(), 'X-Partner-Key', 'non-secret fields are prefilled');
    assert.equal(await dialog.getByLabel('API key').and(page.locator('input')).inputValue(), '', 'the key never is');
    await dialog.getByLabel('Header name').fill('X-Partner-Token');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    listed = (await (await page.request.get(`${base}/api/v1/credentials`)).json()).credentials;
    assert.deepEqual([listed[0].fields, listed[0].secrets], [{ headerName: 'X-Partner-Token' }, { value: true }], 'the key was kept');
    assert.ok(!answers.some((a) => a.includes(KEY)) && !(await page.content()).includes(KEY), 'the key is in no answer and not in the page');
  });
});
