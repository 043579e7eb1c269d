import { describe, expect, it } from 'vitest';
import { credentialSteps } from '@flowdesk/contracts/credential-types';
import { formFields, nodeDefinition } from '@flowdesk/contracts/nodes';
import { credentialOptions } from './StepForm.tsx';
import { stepList } from '../pages/Credentials.tsx';

// The owner's credentials, one or two of each type.
const owned = [
  { name: 'api_key', type: 'header' },
  { name: 'github', type: 'bearer' },
  { name: 'mail', type: 'smtp' },
  { name: 'alerts_bot', type: 'slack_bot' },
  { name: 'alerts_hook', type: 'webhook_url' },
  { name: 'tg', type: 'telegram_bot' },
  { name: 'hmac', type: 'secret' },
  { name: 'crm', type: 'oauth2' },
  { name: 'gpt', type: 'openai_compatible' },
  { name: 'claude', type: 'anthropic' },
] as const;

describe('the credential picker of a step form', () => {
  it('is the form of every Credential field (the credential widget), from the registry', () => {
    for (const type of ['http_request', 'send_email', 'slack', 'discord', 'teams', 'telegram', 'verify_signature'])
      expect(formFields(nodeDefinition(type)!).find((f) => f.key === 'credential')?.widget, type).toBe('credential');
  });

  it('offers only the credentials of the types the step takes', () => {
    expect(credentialOptions('Telegram', owned, '').data).toEqual(['tg']);
    expect(credentialOptions('Send Email', owned, '').data).toEqual(['mail']);
    expect(credentialOptions('Discord', owned, '').data).toEqual(['alerts_hook']);
    expect(credentialOptions('Verify signature', owned, '').data).toEqual(['hmac']);
  });

  it('groups them by type when the step takes several', () => {
    expect(credentialOptions('Slack', owned, '').data).toEqual([
      { group: 'Slack bot token', items: ['alerts_bot'] },
      { group: 'Incoming webhook URL', items: ['alerts_hook'] },
    ]);
    expect(credentialOptions('HTTP Request', owned, '').data).toEqual([
      { group: 'API key in a header', items: ['api_key'] },
      { group: 'Bearer token', items: ['github'] },
      { group: 'OAuth2', items: ['crm'] },
    ]);
  });

  it("offers what the field takes in the step's mode: Slack's bot token or webhook URL, the AI step's model credentials only", () => {
    expect(credentialOptions('Slack', owned, '', { mode: 'bot' }).data).toEqual(['alerts_bot']);
    expect(credentialOptions('Slack', owned, '', {}).data).toEqual(['alerts_bot']);
    expect(credentialOptions('Slack', owned, '', { mode: 'webhook' }).data).toEqual(['alerts_hook']);
    expect(credentialOptions('Slack', owned, 'alerts_bot', { mode: 'webhook' }).problem).toBe(
      '“alerts_bot” is a Slack bot token; this step takes an Incoming webhook URL.',
    );
    // A header or bearer credential goes to an AI step's MCP server rows, not to its Credential field (the model's).
    expect(credentialOptions('AI step', owned, '', {}).data).toEqual([
      { group: 'OpenAI-compatible model API', items: ['gpt'] },
      { group: 'Anthropic API', items: ['claude'] },
    ]);
  });

  it('says when the owner has none of them (the form then links to Settings → Credentials), and not while the list is unknown', () => {
    const none = credentialOptions('Telegram', [{ name: 'mail', type: 'smtp' }], '');
    expect(none).toMatchObject({ none: true, wanted: 'Telegram bot token', data: [] });
    expect(credentialOptions('Telegram', null, 'tg')).toMatchObject({ none: false, problem: null });
  });

  it('keeps any name typed, and says when it is unknown or of another type', () => {
    expect(credentialOptions('Telegram', owned, 'tg').problem).toBeNull();
    expect(credentialOptions('Telegram', owned, 'later_bot').problem).toBe('No credential named “later_bot” yet: create it before the step runs.');
    expect(credentialOptions('Telegram', owned, 'mail').problem).toBe('“mail” is an SMTP server; this step takes a Telegram bot token.');
    expect(credentialOptions('Slack', owned, 'tg').problem).toBe('“tg” is a Telegram bot token; this step takes a Slack bot token or Incoming webhook URL.');
  });

  it('says when the OAuth2 credential picked cannot give a token (the step would fail)', () => {
    const oauth = (status: 'connected' | 'not_connected' | 'needs_reconnect') => [{ name: 'crm', type: 'oauth2' as const, connection: { status } }];
    expect(credentialOptions('HTTP Request', oauth('connected'), 'crm').problem).toBeNull();
    expect(credentialOptions('HTTP Request', oauth('needs_reconnect'), 'crm').problem).toBe(
      '“crm” needs reconnecting: Reconnect it in Settings → Credentials.',
    );
    expect(credentialOptions('HTTP Request', oauth('not_connected'), 'crm').problem).toBe('“crm” is not connected yet: Connect it in Settings → Credentials.');
  });
});

describe('Settings → Credentials names the steps that take a credential, from the registry', () => {
  it('lists every such step once, Verify signature last', () => {
    const steps = credentialSteps();
    expect(steps).toEqual(['HTTP Request', 'AI step', 'Send Email', 'Slack', 'Discord', 'Microsoft Teams', 'Telegram', 'Verify signature']);
    expect(stepList(steps)).toBe('HTTP Request, AI step, Send Email, Slack, Discord, Microsoft Teams, Telegram or Verify signature');
    expect(stepList(['Slack'])).toBe('Slack');
  });
});
