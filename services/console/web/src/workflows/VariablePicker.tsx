import { Alert, Badge, Button, Code, CopyButton, Group, Loader, Stack, Text, Title, VisuallyHidden } from '@mantine/core';
import { IconBraces, IconCheck, IconCopy, IconKey } from '@tabler/icons-react';
import { ago, exact } from '../format.ts';
import { tree, variable } from './templates.ts';
import type { PickerSource } from './picker-sources.ts';
import { TRIGGER_LABEL, type TriggerType } from './triggers.ts';
import type { Workflow } from '../api.ts';
import type { ReactNode } from 'react';

type WebhookEndpoint = NonNullable<Workflow['webhook']>;

export type { PickerSource } from './picker-sources.ts';

/**
 * A curl command that sends a sample request, as a person would paste it into a terminal. It sends
 * x-webhook-secret only when the workflow requires it (a workflow that does not would be shown a
 * secret it never checks).
 */
export function curlCommand(webhook: Pick<WebhookEndpoint, 'url' | 'requireSecret'>, secret: string | null): string {
  return [
    `curl -X POST '${webhook.url}'`,
    `  -H 'content-type: application/json'`,
    ...(webhook.requireSecret ? [`  -H 'x-webhook-secret: ${secret ?? '<your webhook secret>'}'`] : []),
    `  -d '{"customer": {"name": "Ada Lovelace", "email": "ada@example.com"}, "order": {"id": "A-1001", "total": 42}}'`,
  ].join(' \\\n');
}

function Tree({ source, onPick }: { source: PickerSource; onPick: (text: string) => void }) {
  const rows = tree(source.value);
  if (rows.length === 0)
    return (
      <Text size="xs" c="dimmed">
        No fields.
      </Text>
    );
  return (
    <ul role="list" aria-label={`${source.title} fields`} style={{ listStyle: 'none', margin: 0, padding: 0 }}>
      {rows.map((r) => {
        // A root-less source (a For each's item and index) inserts its paths as they are.
        const text = variable(source.root ? `${source.root}.${r.path}` : r.path);
        return (
          <li key={r.path}>
            <button
              type="button"
              className="fd-tree-row"
              style={{ paddingLeft: 6 + r.depth * 14 }}
              draggable
              onDragStart={(e) => {
                e.dataTransfer.setData('text/plain', text);
                e.dataTransfer.effectAllowed = 'copy';
              }}
              onClick={() => onPick(text)}
              title={`Insert ${text}`}
            >
              <Text span size="sm" fw={r.leaf ? 500 : 650} ff="monospace">
                {r.key}
              </Text>
              <Text span size="xs" c="dimmed" truncate style={{ flex: 1, minWidth: 0 }}>
                {r.summary}
              </Text>
              <VisuallyHidden>Insert {text}</VisuallyHidden>
            </button>
          </li>
        );
      })}
    </ul>
  );
}

/** What each trigger type puts in `{{trigger.*}}` (docs/triggers.md), under the picker's trigger tree. */
const TRIGGER_HINT: Record<Exclude<TriggerType, 'webhook'>, string> = {
  manual: 'The JSON payload given to Run now ({} when none).',
  schedule: 'scheduledFor: the tick’s time (UTC, ISO); firedAt: when it fired; missedTicks: ticks missed while Flowdesk was down.',
  note: 'event: created or updated; note: the note after the change; previous: before it (null when created).',
  entity: 'entity: its kind; event: created, updated, completed or deleted; before / after: the entity (null when created / deleted).',
  error:
    'workflow.id: the workflow that failed; run: its id, eventId, triggerType, times; failedNode: id, type, error (null when no node failed); error: the run’s error.',
  form: 'Each field by its key (a number field as a number, null when left empty; the others as text, "" when left empty); submittedAt: when it was sent.',
};

/**
 * The variable picker: the sample payload (or, for other trigger types, what that trigger provides), earlier nodes' outputs from the last run, and stored
 * credentials (when the deployment has a credential store), each field a button that inserts its
 * `{{…}}` at the caret of the field focused last (or is dragged onto any field).
 */
export function VariablePicker({
  triggerType,
  trigger,
  sample,
  sampleAt,
  samplePinned = false,
  sampleControls,
  webhook,
  secret,
  active,
  nodeSources,
  credentials,
  resumeWaits = [],
  targetLabel,
  onPick,
}: {
  triggerType: TriggerType;
  /** For triggers other than the webhook: `{{trigger.*}}` pinned, from the last run of this type, else an example. */
  trigger: { value: Record<string, unknown>; fromRun: boolean; pinned?: boolean } | null;
  sample: Record<string, unknown> | null;
  sampleAt: string | null;
  /** The sample is pinned (deliveries do not replace it). */
  samplePinned?: boolean;
  /** Pin / edit / unpin the sample (sample.tsx), shown above the trigger's fields. */
  sampleControls?: ReactNode;
  webhook: Pick<WebhookEndpoint, 'url' | 'requireSecret'> | null;
  secret: string | null;
  active: boolean;
  nodeSources: PickerSource[];
  credentials: string[] | null;
  /** The graph's Wait nodes in resume mode: their links, {{wait.<id>.resumeUrl}}, usable by any step. */
  resumeWaits?: string[];
  targetLabel: string | null;
  onPick: (text: string) => void;
}) {
  return (
    <Stack gap="sm" aria-label="Variables" role="region">
      <Group justify="space-between" gap="xs">
        <Title order={3} size="h6">
          <Group gap={6} component="span">
            <IconBraces size={16} aria-hidden /> Variables
          </Group>
        </Title>
        <Text size="xs" c="dimmed" aria-live="polite">
          {targetLabel ? `Inserts into “${targetLabel}”` : 'Click a field, then a variable'}
        </Text>
      </Group>
      {sampleControls}
      {triggerType !== 'webhook' && trigger && (
        <div data-testid="trigger-variables">
          <Group justify="space-between" mb={4}>
            <Text size="xs" fw={650} tt="uppercase" c="dimmed">
              Trigger ({TRIGGER_LABEL[triggerType].toLowerCase()})
            </Text>
            <Badge size="xs" variant="light" color="gray" c="gray.8" tt="none">
              {trigger.pinned ? 'pinned' : trigger.fromRun ? 'last run' : 'example'}
            </Badge>
          </Group>
          <Tree source={{ root: 'trigger', title: 'Trigger', value: trigger.value }} onPick={onPick} />
          <Text size="xs" c="dimmed" mt={4}>
            {TRIGGER_HINT[triggerType]}
          </Text>
        </div>
      )}
      {triggerType === 'webhook' && (
        <div>
          <Group justify="space-between" mb={4}>
            <Text size="xs" fw={650} tt="uppercase" c="dimmed">
              Trigger ({samplePinned ? 'pinned sample' : 'last request'})
            </Text>
            {sampleAt && !samplePinned && (
              <Text size="xs" c="dimmed" title={exact(sampleAt)} data-testid="sample-received">
                received {ago(sampleAt)}
              </Text>
            )}
          </Group>
          {sample ? (
            <Tree source={{ root: 'trigger', title: 'Trigger', value: sample }} onPick={onPick} />
          ) : (
            <Alert variant="light" color="indigo" radius="md" p="sm" data-testid="sample-waiting">
              <Stack gap={6}>
                <Text size="sm" fw={600}>
                  No request received yet
                </Text>
                <Text size="xs">
                  {active
                    ? 'Send one to the webhook URL; its fields appear here as soon as it arrives.'
                    : 'Activate the workflow (inactive workflows answer 404), then send a request; its fields appear here as soon as it arrives.'}
                </Text>
                {webhook && (
                  <>
                    <Code block fz={11} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid="curl-command">
                      {curlCommand(webhook, secret)}
                    </Code>
                    <CopyButton value={curlCommand(webhook, secret)}>
                      {({ copied, copy }) => (
                        <Button size="xs" variant="light" leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />} onClick={copy}>
                          {copied ? 'Copied' : 'Copy curl command'}
                        </Button>
                      )}
                    </CopyButton>
                  </>
                )}
                {active && (
                  <Group gap={6}>
                    <Loader size={12} aria-hidden />
                    <Text size="xs">Waiting for a request…</Text>
                  </Group>
                )}
              </Stack>
            </Alert>
          )}
        </div>
      )}
      {nodeSources.length > 0 && (
        <Text size="xs" fw={650} tt="uppercase" c="dimmed" mb={-4}>
          Earlier steps
        </Text>
      )}
      {nodeSources.map((s) => (
        <div key={s.root} data-testid={`picker-source-${s.root || 'loop'}`}>
          <Group justify="space-between" mb={4}>
            <Text size="xs" fw={650} c="dimmed">
              {s.title}
            </Text>
            {s.note && (
              <Badge size="xs" variant="light" color="gray" c="gray.8" tt="none">
                {s.note}
              </Badge>
            )}
          </Group>
          {s.empty ? (
            <Text size="xs" c="dimmed">
              {s.empty}
            </Text>
          ) : (
            <Tree source={s} onPick={onPick} />
          )}
        </div>
      ))}
      {resumeWaits.length > 0 && (
        <div>
          <Text size="xs" fw={650} tt="uppercase" c="dimmed" mb={4}>
            Resume links
          </Text>
          <Tree
            source={{ root: 'wait', title: 'Resume links', value: Object.fromEntries(resumeWaits.map((id) => [id, { resumeUrl: "this run's link" }])) }}
            onPick={onPick}
          />
          <Text size="xs" c="dimmed" mt={4}>
            Any step may send a Wait&apos;s link, before the run waits there (e.g. to an approver).
          </Text>
        </div>
      )}
      {credentials && (
        <div>
          <Text size="xs" fw={650} tt="uppercase" c="dimmed" mb={4}>
            Credentials
          </Text>
          {credentials.length === 0 ? (
            <Text size="xs" c="dimmed">
              No credentials stored yet.
            </Text>
          ) : (
            <Tree source={{ root: 'credentials', title: 'Credentials', value: Object.fromEntries(credentials.map((c) => [c, '••••••'])) }} onPick={onPick} />
          )}
          <Group gap={4} mt={4}>
            <IconKey size={12} aria-hidden />
            <Text size="xs" c="dimmed">
              Inserted as a reference; the value never appears here.
            </Text>
          </Group>
        </div>
      )}
    </Stack>
  );
}
