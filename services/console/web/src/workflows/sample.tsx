/**
 * The pinned sample (docs/console.md, "Pinned sample"): the trigger data the editor's previews, the
 * variable picker, Run now and Run this step start from. Pinned from a recorded run ("Pin this
 * delivery" on a run's page, or a recent delivery in the editor), from the template a workflow was
 * made from, or typed as JSON; while pinned, deliveries no longer replace it. The server checks
 * and limits it (256 KiB as JSON; its 400/413 message is shown as it is).
 */
import { Alert, Badge, Button, Group, Menu, Modal, Stack, Text, Textarea } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChevronDown, IconPin, IconPinnedOff } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type Workflow, type WorkflowRun } from '../api.ts';
import { ago, exact } from '../format.ts';
import { parsePayload } from './triggers.ts';

const SOURCE_LABEL: Record<NonNullable<Workflow['samplePin']>['source'], string> = {
  delivery: 'from a delivery',
  template: 'from the template',
  typed: 'typed in',
  import: 'from the imported file',
};

/** The badge's words: "pinned · from the template", or "last delivery" while not pinned. */
export function sampleLabel(pin: Workflow['samplePin']): string {
  return pin ? `pinned · ${SOURCE_LABEL[pin.source]}` : 'last delivery';
}

/** A run whose payload the engine could not store keeps a placeholder, never a sample worth pinning. */
const pinnable = (run: Pick<WorkflowRun, 'triggerPayload'>) => typeof run.triggerPayload._unstorable !== 'string';

/** "Pin this delivery" on a run's page: its trigger data becomes the workflow's pinned sample. */
export function PinDeliveryButton({ run }: { run: Pick<WorkflowRun, 'id' | 'workflowId' | 'triggerPayload'> }) {
  const [busy, setBusy] = useState(false);
  if (!pinnable(run)) return null;
  const pin = async () => {
    setBusy(true);
    try {
      await api.pinSample(run.workflowId, { payload: run.triggerPayload, source: 'delivery', runId: run.id });
      notifications.show({ color: 'green', message: 'Pinned: the editor’s previews, Run now and Run this step start from this payload.' });
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not pin this delivery', message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button variant="light" size="xs" leftSection={<IconPin size={14} />} onClick={() => void pin()} loading={busy}>
      Pin this delivery as the sample
    </Button>
  );
}

/**
 * The editor's sample controls (above the picker's trigger fields): what the sample is, Pin it (the
 * last delivery) or a recent delivery, Edit sample (typed JSON), Unpin. `onChanged` gets the
 * workflow as the server answered.
 */
export function SampleControls({
  workflow,
  runs,
  onChanged,
}: {
  workflow: Pick<Workflow, 'id' | 'samplePayload' | 'samplePayloadAt' | 'samplePin'>;
  /** Recent runs, newest first: their trigger data can be pinned. */
  runs: readonly WorkflowRun[];
  onChanged: (w: Workflow) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const pin = workflow.samplePin ?? null;
  const act = async (what: string, call: () => Promise<Workflow>) => {
    setBusy(true);
    try {
      onChanged(await call());
    } catch (err) {
      notifications.show({ color: 'red', title: what, message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const deliveries = runs.filter(pinnable).slice(0, 10);
  return (
    <Stack gap={6} data-testid="sample-controls">
      <Group gap={6} justify="space-between" wrap="wrap">
        {workflow.samplePayload ? (
          <Badge
            size="sm"
            variant="light"
            color={pin ? 'indigo' : 'gray'}
            c={pin ? 'indigo.9' : 'gray.8'}
            tt="none"
            leftSection={pin ? <IconPin size={12} aria-hidden /> : undefined}
            title={pin ? `Pinned ${exact(pin.pinnedAt)}` : workflow.samplePayloadAt ? `Received ${exact(workflow.samplePayloadAt)}` : undefined}
            data-testid="sample-state"
          >
            Sample: {sampleLabel(pin)}
            {!pin && workflow.samplePayloadAt ? ` · ${ago(workflow.samplePayloadAt)}` : ''}
          </Badge>
        ) : (
          <Text size="xs" c="dimmed" data-testid="sample-state">
            No sample yet
          </Text>
        )}
        <Group gap={4} wrap="wrap">
          {workflow.samplePayload && !pin && (
            <Button
              size="compact-xs"
              variant="light"
              leftSection={<IconPin size={12} />}
              loading={busy}
              onClick={() => void act('Could not pin the sample', () => api.pinSample(workflow.id, { payload: workflow.samplePayload!, source: 'delivery' }))}
            >
              Pin
            </Button>
          )}
          {deliveries.length > 0 && (
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <Button size="compact-xs" variant="default" rightSection={<IconChevronDown size={12} />} disabled={busy}>
                  Pin a recent delivery
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                {deliveries.map((r) => (
                  <Menu.Item
                    key={r.id}
                    onClick={() =>
                      void act('Could not pin the delivery', () => api.pinSample(workflow.id, { payload: r.triggerPayload, source: 'delivery', runId: r.id }))
                    }
                  >
                    Run {ago(r.createdAt)} · {r.status}
                  </Menu.Item>
                ))}
              </Menu.Dropdown>
            </Menu>
          )}
          <Button size="compact-xs" variant="default" onClick={() => setEditing(true)} disabled={busy}>
            Edit sample
          </Button>
          {pin && (
            <Button
              size="compact-xs"
              variant="subtle"
              color="gray"
              leftSection={<IconPinnedOff size={12} />}
              loading={busy}
              onClick={() => void act('Could not unpin the sample', () => api.unpinSample(workflow.id))}
            >
              Unpin
            </Button>
          )}
        </Group>
      </Group>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={editing}
        onClose={() => setEditing(false)}
        title={<Text fw={650}>Edit the sample</Text>}
        centered
        radius="lg"
        size="lg"
      >
        {/* Mounted per opening: the text starts from the sample as it is now. */}
        <SampleForm
          workflow={workflow}
          onClose={() => setEditing(false)}
          onPinned={(w) => {
            setEditing(false);
            onChanged(w);
          }}
        />
      </Modal>
    </Stack>
  );
}

function SampleForm({
  workflow,
  onClose,
  onPinned,
}: {
  workflow: Pick<Workflow, 'id' | 'samplePayload'>;
  onClose: () => void;
  onPinned: (w: Workflow) => void;
}) {
  const [text, setText] = useState(() => (workflow.samplePayload ? JSON.stringify(workflow.samplePayload, null, 2) : ''));
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const check = parsePayload(text);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!check.ok || busy) return;
    setBusy(true);
    setFailed(null);
    try {
      onPinned(await api.pinSample(workflow.id, { payload: check.payload, source: 'typed' }));
    } catch (err) {
      setFailed((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
      <Stack gap="sm">
        {failed && (
          <Alert color="red" variant="light" role="alert" title="The sample was not pinned">
            {failed}
          </Alert>
        )}
        <Textarea
          label="Sample trigger data (JSON)"
          description="An object, as {{trigger.…}} holds it (at most 256 KiB). Pinned: deliveries no longer replace it."
          placeholder={'{\n  "customer": { "name": "Ada" }\n}'}
          autosize
          minRows={6}
          maxRows={16}
          ff="monospace"
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          error={check.ok ? null : check.error}
          data-autofocus
        />
        <Group justify="flex-end" mt="xs">
          <Button variant="default" onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button type="submit" leftSection={<IconPin size={16} />} loading={busy} disabled={!check.ok}>
            Pin sample
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
