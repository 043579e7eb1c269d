import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A consumer group of this process alone (`<prefix>.<host>.<uuid>`), for a subscriber that needs
 * every message of a topic, e.g. each replica's definition cache: a group per host would be shared by
 * two processes on one host, each then seeing only part of the messages. Subscribe with
 * `ephemeral: true` so close() deletes it; the host name only tells people whose it is.
 */
export const instanceGroupId = (prefix: string): string => `${prefix}.${hostname()}.${randomUUID()}`;

/**
 * The group as a metric label: a per-process group (instanceGroupId) counts under `<prefix>.instance`,
 * so labels stay a handful per deployment instead of one series per process start (docs/observability.md).
 */
export function groupLabel(groupId: string): string {
  const host = `.${hostname()}.`;
  const at = groupId.lastIndexOf(host);
  if (at > 0 && UUID.test(groupId.slice(at + host.length))) return `${groupId.slice(0, at)}.instance`;
  return groupId;
}
