import { describe, expect, it } from 'vitest';
import { curlCommand } from './VariablePicker.tsx';

describe('the webhook’s curl sample', () => {
  const url = 'https://flowdesk.example/functions/v1/webhook-trigger/0b6f2d4e-1111-4222-8333-444455556666';
  it('sends x-webhook-secret when the workflow requires it (the secret once revealed, else a placeholder)', () => {
    expect(curlCommand({ url, requireSecret: true }, 's3cret')).toContain(`-H 'x-webhook-secret: s3cret'`);
    expect(curlCommand({ url, requireSecret: true }, null)).toContain(`-H 'x-webhook-secret: <your webhook secret>'`);
  });
  it('sends no secret header when the workflow does not require one', () => {
    const cmd = curlCommand({ url, requireSecret: false }, 's3cret');
    expect(cmd).not.toMatch(/x-webhook-secret|s3cret/);
    expect(cmd.split(' \\\n')).toEqual([`curl -X POST '${url}'`, `  -H 'content-type: application/json'`, expect.stringMatching(/^ {2}-d '\{/)]);
  });
});
