/**
 * Resume links known before the Wait runs (docs/workflow-engine.md, "Wait"): a `resume` Wait's link
 * is derived from the run's identity (owner, workflow, trigger event, node) with a server key, so any
 * step of the run can send it as `{{wait.<nodeId>.resumeUrl}}` before the run parks there, and the
 * Wait stores the SHA-256 of the same secret when it parks. The key is derived from the credentials
 * key (CREDENTIALS_KEY); without one a Wait's link is random and known only once it parks.
 */
import { createHmac } from 'node:crypto';

export interface RunIdentity {
  ownerId: string;
  workflowId: string;
  eventId: string;
}

export interface ResumeLink {
  waitId: string;
  secret: string;
  url: string;
}

/** The resume links' own key: an HMAC sub-key of the credentials key, never the key itself. */
export function resumeLinkKey(credentialsKey: Buffer): Buffer {
  return createHmac('sha256', credentialsKey).update('flowdesk resume links v1').digest();
}

/**
 * The link of Wait node `nodeId` in this run: `<base>/api/v1/resume/<waitId>?secret=<secret>`, the id a
 * UUID (version 4 layout) and the secret 256 bits (base64url), both HMAC-SHA256 of the run's identity.
 */
export function resumeLinkOf(key: Buffer, run: RunIdentity, nodeId: string, baseUrl = ''): ResumeLink {
  const of = (label: string) => createHmac('sha256', key).update(`${label}\n${run.ownerId}\n${run.workflowId}\n${run.eventId}\n${nodeId}`).digest();
  const id = of('wait-id').subarray(0, 16);
  id[6] = (id[6]! & 0x0f) | 0x40;
  id[8] = (id[8]! & 0x3f) | 0x80;
  const hex = id.toString('hex');
  const waitId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const secret = of('secret').toString('base64url');
  return { waitId, secret, url: `${baseUrl.replace(/\/+$/, '')}/api/v1/resume/${waitId}?secret=${secret}` };
}
