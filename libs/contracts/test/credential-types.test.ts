// The credential-type registry (src/credential-types.ts): Settings → Credentials says, for each
// credential type, which steps take it ("Use as"), from `usedBy`, and the step form's credential
// picker offers a step the owner's credentials of the types that name it (credentialTypesFor). Each
// name there must be a step type's label in the node registry, so a renamed or removed node cannot
// leave the page naming a step that does not exist; and every step with a Credential field is named
// by some type, so its picker is never empty by mistake.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkCredentialFields,
  CREDENTIAL_TYPES,
  credentialSteps,
  credentialTypesFor,
  HTTP_CREDENTIAL_TYPES,
  secretFieldKeys,
  usedByLabels,
} from '../src/credential-types.ts';
import { formFields, NODE_TYPES } from '../src/nodes/index.ts';

test('every credential type names the steps that take it, each a step type of the registry', () => {
  const labels = new Set(NODE_TYPES.map((d) => d.label));
  for (const t of CREDENTIAL_TYPES) {
    assert.ok(t.usedBy, `${t.id} says which steps use it`);
    for (const name of usedByLabels(t)) assert.ok(labels.has(name), `${t.id}: "${name}" is not a step type's label`);
  }
});

test("every step with a Credential field (the credential widget) is named by a type's usedBy, and only those are", () => {
  const withPicker = NODE_TYPES.filter((d) => formFields(d).some((f) => f.widget === 'credential')).map((d) => d.label);
  assert.ok(withPicker.includes('Telegram') && withPicker.includes('HTTP Request'));
  for (const label of withPicker) assert.ok(credentialTypesFor(label).length > 0, `${label}: no credential type names it`);
  assert.deepEqual([...credentialSteps()].sort(), [...withPicker].sort());
});

test('credentialTypesFor: the types a step takes, as its engine handler does', () => {
  assert.deepEqual(credentialTypesFor('HTTP Request'), HTTP_CREDENTIAL_TYPES);
  assert.deepEqual(credentialTypesFor('Send Email'), ['smtp']);
  assert.deepEqual(credentialTypesFor('Slack'), ['slack_bot', 'webhook_url']);
  assert.deepEqual(credentialTypesFor('Microsoft Teams'), ['webhook_url']);
  assert.deepEqual(credentialTypesFor('Telegram'), ['telegram_bot']);
  assert.deepEqual(credentialTypesFor('Verify signature'), ['secret']);
  assert.deepEqual(credentialTypesFor('Code'), []);
  assert.ok(HTTP_CREDENTIAL_TYPES.includes('oauth2'));
});

test("credentialTypesFor with a step's params and field: Slack's mode, the AI step's model credential and its MCP server rows", () => {
  assert.deepEqual(credentialTypesFor('Slack', { mode: 'bot' }), ['slack_bot']);
  assert.deepEqual(credentialTypesFor('Slack', {}), ['slack_bot']);
  assert.deepEqual(credentialTypesFor('Slack', { mode: 'webhook' }), ['webhook_url']);
  assert.deepEqual(credentialTypesFor('AI step'), ['openai_compatible', 'anthropic']);
  assert.deepEqual(credentialTypesFor('AI step', {}, 'mcpServers'), ['header', 'bearer']);
  assert.deepEqual(credentialTypesFor('Discord', { mode: 'webhook' }), ['webhook_url']);
});

test('oauth2: the grant decides what is required; tokens are set by Connect, never by hand, and a replacement drops them', () => {
  const base = { tokenUrl: 'https://id.example/token', clientId: 'flowdesk' };
  const noAuthorize = checkCredentialFields('oauth2', base);
  assert.deepEqual(!noAuthorize.ok && [noAuthorize.field, noAuthorize.message], [
    'fields.authorizeUrl',
    'Authorization URL is required for the authorization_code grant',
  ]);
  const noSecret = checkCredentialFields('oauth2', { ...base, grant: 'client_credentials' });
  assert.equal(!noSecret.ok && noSecret.field, 'fields.clientSecret');
  assert.deepEqual(checkCredentialFields('oauth2', { ...base, authorizeUrl: 'https://id.example/auth', scopes: 'openid offline_access' }), {
    ok: true,
    fields: { grant: 'authorization_code', authorizeUrl: 'https://id.example/auth', ...base, scopes: 'openid offline_access' },
  });
  const typed = checkCredentialFields('oauth2', { ...base, authorizeUrl: 'https://id.example/auth', accessToken: 'forged' });
  assert.deepEqual(!typed.ok && [typed.field, typed.message], ['fields.accessToken', 'Access token is set by Connect and refreshes, not by hand']);
  const replaced = checkCredentialFields(
    'oauth2',
    { ...base, authorizeUrl: 'https://id.example/auth', scopes: 'read' },
    { ...base, authorizeUrl: 'https://id.example/auth', clientSecret: 's3', accessToken: 'at', refreshToken: 'rt' },
  );
  assert.deepEqual(replaced.ok && replaced.fields, {
    grant: 'authorization_code',
    authorizeUrl: 'https://id.example/auth',
    ...base,
    clientSecret: 's3',
    scopes: 'read',
  });
  assert.equal(checkCredentialFields('oauth2', { ...base, authorizeUrl: 'https://id.example/auth', scopes: 'a  b' }).ok, false);
  assert.deepEqual(secretFieldKeys('oauth2'), ['clientSecret', 'accessToken', 'refreshToken']);
});

test('the model credentials: openai_compatible fills its base URL and key header, takes no key (a local Ollama), refuses a URL with a query; anthropic needs its key', () => {
  assert.deepEqual(checkCredentialFields('openai_compatible', { apiKey: 'sk-1' }), {
    ok: true,
    fields: { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-1', keyHeader: 'bearer' },
  });
  assert.deepEqual(checkCredentialFields('openai_compatible', { baseUrl: 'http://127.0.0.1:11434/v1' }), {
    ok: true,
    fields: { baseUrl: 'http://127.0.0.1:11434/v1', keyHeader: 'bearer' },
  });
  const query = checkCredentialFields('openai_compatible', { baseUrl: 'https://x.example/v1?key=1' });
  assert.equal(query.ok, false);
  assert.equal(!query.ok && query.field, 'fields.baseUrl');
  assert.equal(checkCredentialFields('openai_compatible', { keyHeader: 'x-key' }).ok, false);
  const noKey = checkCredentialFields('anthropic', {});
  assert.equal(!noKey.ok && noKey.message, 'API key is required');
  assert.deepEqual(checkCredentialFields('anthropic', { apiKey: 'sk-ant-1' }), {
    ok: true,
    fields: { apiKey: 'sk-ant-1', baseUrl: 'https://api.anthropic.com' },
  });
  assert.deepEqual(secretFieldKeys('openai_compatible'), ['apiKey']);
  assert.deepEqual(secretFieldKeys('anthropic'), ['apiKey']);
});
