// The credential picker of a step form, in Debian's chromium on a fresh embedded start
// (docs/credentials.md, "Console"): a step's Credential field (the registry's credential widget)
// offers the owner's credentials of the types that step takes (credential-types.ts `usedBy`), links
// to Settings → Credentials when there is none, and keeps a name typed for a credential created later.
// Settings → Credentials names the steps that take one, from the registry. axe-core on the form.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { credentialSteps } from '@flowdesk/contracts/credential-types';
import { assertAccessible, launch, ownerPage, saveWorkflow, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

describe('the credential picker in step forms, in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let csrf: string;
  let workflowId: string;

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    ({ context, page } = await ownerPage(browser, base, owner));
    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    csrf = ((await (await page.request.get(`${base}/api/v1/session`)).json()) as { csrfToken: string }).csrfToken;
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await flowdesk?.close();
  });

  const post = async (path: string, data: unknown) => {
    const res = await page.request.post(`${base}/api/v1${path}`, { data, headers: { origin: base, 'x-csrf-token': csrf } });
    assert.ok(res.ok(), `${path}: ${res.status()} ${await res.text()}`);
    return res.json() as Promise<{ id: string }>;
  };
  const panel = () => page.getByRole('complementary', { name: 'Node panel' });
  const credentialField = () =>
    panel()
      .getByLabel(/^Credential( \*)?$/)
      .and(page.locator('input'));
  const savedCredential = async () =>
    ((await (await page.request.get(`${base}/api/v1/workflows/${workflowId}`)).json()) as { graph: { nodes: { params: { credential?: string } }[] } }).graph
      .nodes[0]!.params.credential;

  test('Settings → Credentials names every step that takes a credential, from the registry', async () => {
    await page.goto(`${base}/settings/credentials`);
    await page.getByText('No credentials yet').waitFor();
    const header = await page.locator('main').innerText();
    for (const step of credentialSteps()) assert.ok(header.includes(step), `the page names ${step}`);
    assert.match(header, /Credential field of HTTP Request, .*Slack, Discord, Microsoft Teams, Telegram or Verify signature steps/);
  });

  test('no credential of the type yet: the field says so and links to Settings → Credentials; a name typed is kept and saved', async () => {
    workflowId = (await post('/workflows', { name: 'Tell the team', triggerType: 'manual' })).id;
    await page.goto(`${base}/workflows/${workflowId}`);
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'Telegram', exact: true }).click();
    await panel().getByRole('heading', { name: 'Telegram', level: 2 }).waitFor();
    const none = panel().getByRole('status', { name: 'No credential of this type' });
    await none.waitFor();
    assert.match(await none.innerText(), /You have no Telegram bot token credential yet/);
    const link = none.getByRole('link', { name: 'Create one in Settings → Credentials' });
    assert.equal(await link.getAttribute('href'), '/settings/credentials');
    assert.equal(await link.getAttribute('target'), '_blank', 'the unsaved editor stays open');

    await credentialField().fill('team_bot');
    await panel().getByRole('status', { name: 'Credential check' }).getByText('No credential named “team_bot” yet: create it before the step runs.').waitFor();
    await panel()
      .getByLabel(/^Chat id/)
      .and(page.locator('input'))
      .fill('-1001234567890');
    await panel()
      .getByLabel(/^Text( \*)?$/)
      .and(page.locator('textarea'))
      .fill('Hello');
    await assertAccessible(page, 'a Telegram step with no credential yet');
    await saveWorkflow(page);
    assert.equal(await savedCredential(), 'team_bot', 'free text for a credential created later');
  });

  test("with credentials: it offers only those of the step's types, says when the name is of another type, and saves the one picked", async () => {
    await post('/credentials', { name: 'team_bot', type: 'telegram_bot', fields: { token: '7012345678:AAF-picker-test-token-abcdef' } });
    await post('/credentials', { name: 'ops_bot', type: 'telegram_bot', fields: { token: '7012345679:AAF-picker-test-token-ghijkl' } });
    await post('/credentials', { name: 'mail', type: 'smtp', fields: { host: 'smtp.example.com', from: 'robot@example.com' } });
    await post('/credentials', { name: 'alerts_bot', type: 'slack_bot', fields: { token: 'xoxb-1-2-picker' } });
    await page.reload();
    await page.getByTestId('node-telegram_1').click();
    await panel().getByRole('heading', { name: 'Telegram', level: 2 }).waitFor();
    assert.equal(await credentialField().inputValue(), 'team_bot');
    // Now that it exists (and is of the right type), nothing is said about it.
    await page.getByRole('status', { name: 'No credential of this type' }).waitFor({ state: 'detached' });
    assert.equal(await panel().getByRole('status', { name: 'Credential check' }).count(), 0);

    await credentialField().fill('mail');
    await panel().getByRole('status', { name: 'Credential check' }).getByText('“mail” is an SMTP server; this step takes a Telegram bot token.').waitFor();
    await credentialField().fill('');
    await credentialField().click();
    const listbox = page.getByRole('listbox');
    await listbox.waitFor();
    const offered = await listbox.getByRole('option').allInnerTexts();
    assert.deepEqual(offered.sort(), ['ops_bot', 'team_bot'], 'only the telegram_bot credentials');
    await assertAccessible(page, 'the credential picker open');
    await listbox.getByRole('option', { name: 'ops_bot' }).click();
    assert.equal(await credentialField().inputValue(), 'ops_bot');
    await saveWorkflow(page);
    assert.equal(await savedCredential(), 'ops_bot');
  });

  test('a step with modes offers what its mode takes (Slack: the bot token with a bot, the incoming webhook URL with a webhook)', async () => {
    await post('/credentials', { name: 'alerts_hook', type: 'webhook_url', fields: { url: 'https://hooks.slack.com/services/T0/B0/x' } });
    await page.reload();
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('menuitem', { name: 'Slack', exact: true }).click();
    await panel().getByRole('heading', { name: 'Slack', level: 2 }).waitFor();
    await credentialField().click();
    const listbox = page.getByRole('listbox');
    await listbox.waitFor();
    assert.deepEqual(await listbox.getByRole('option').allInnerTexts(), ['alerts_bot'], 'mode bot (the default): Slack bot tokens only');
    const text = await listbox.innerText();
    assert.ok(!text.includes('alerts_hook') && !text.includes('team_bot') && !text.includes('mail'), text);
    await page.keyboard.press('Escape');
    await panel().getByLabel('Send with').and(page.locator('input')).click();
    await page.getByRole('option', { name: 'Incoming webhook' }).click();
    await credentialField().click();
    await listbox.waitFor();
    assert.deepEqual(await listbox.getByRole('option').allInnerTexts(), ['alerts_hook'], 'mode webhook: incoming webhook URLs only');
  });
});
