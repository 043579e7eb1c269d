// The credential-type registry (src/credential-types.ts): Settings → Credentials says, for each typed
// credential, which steps take it ("Use as"), from `usedBy`; each name there must be a step type's
// label in the node registry, so a renamed or removed node cannot leave the page naming a step that
// does not exist.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CREDENTIAL_TYPES } from '../src/credential-types.ts';
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
