import { expect, test } from 'vitest';
import { WORKFLOW_IMPORT_MAX_BYTES } from '@flowdesk/contracts';
import { importProblems, readWorkflowFile } from './import-file.ts';

test('a pasted file is read as JSON, or refused with the reason before it is sent', () => {
  expect(readWorkflowFile('{"format":"flowdesk.workflow"}')).toEqual({ file: { format: 'flowdesk.workflow' } });
  // A file downloaded from n8n is sent unchanged: the server converts it.
  const n8n = {
    name: 'From n8n',
    nodes: [{ name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0], parameters: {} }],
    connections: {},
  };
  expect(readWorkflowFile(JSON.stringify(n8n))).toEqual({ file: n8n });
  expect((readWorkflowFile('{"format":') as { error: string }).error).toMatch(/^This is not JSON/);
  expect((readWorkflowFile('  ') as { error: string }).error).toMatch(/Paste a workflow file/);
  expect((readWorkflowFile(`"${'x'.repeat(WORKFLOW_IMPORT_MAX_BYTES)}"`) as { error: string }).error).toMatch(/larger than 1024 KB/);
});

test('after an import, each step naming a credential the user lacks is listed after the server’s problems', () => {
  const result = {
    problems: [{ nodeId: 'fax', kind: 'left_out' as const, message: 'step "fax" is of type "send_fax"…' }],
    credentials: [
      { name: 'shop', nodeIds: ['fetch', 'post'] },
      { name: 'github', nodeIds: ['verify'] },
    ],
  };
  expect(importProblems(result, ['github']).map((p) => [p.nodeId, p.kind])).toEqual([
    ['fax', 'left_out'],
    ['fetch', 'needs_attention'],
    ['post', 'needs_attention'],
  ]);
  expect(importProblems(result, ['github'])[1]!.message).toMatch(/"shop"/);
  // No credential store here: nothing to compare with, nothing claimed missing.
  expect(importProblems(result, null)).toHaveLength(1);
});
