// The credential-type registry (src/credential-types.ts): Settings → Credentials says, for each typed
// credential, which steps take it ("Use as"), from `usedBy`; each name there must be a step type's
// label in the node registry, so a renamed or removed node cannot leave the page naming a step that
// does not exist.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCredentialFields, CREDENTIAL_TYPES, secretFieldKeys } from '../src/credential-types.ts';
import { NODE_TYPES } from '../src/nodes/index.ts';

test('every typed credential names the steps that take it, each a step type of the registry', () => {
  const labels = new Set(NODE_TYPES.map((d) => d.label));
  for (const t of CREDENTIAL_TYPES) {
    if (t.id === 'secret') {
      assert.equal(t.usedBy, undefined, 'a secret is a {{credentials.<name>}} reference, not a step param');
      continue;
    }
    assert.ok(t.usedBy, `${t.id} says which steps use it`);
    for (const name of t.usedBy.split(', ')) assert.ok(labels.has(name), `${t.id}: "${name}" is not a step type's label`);
  }
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
