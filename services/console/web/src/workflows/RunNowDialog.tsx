import { Alert, Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import { IconPlayerPlay } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type Workflow, type WorkflowRun } from '../api.ts';
import { parsePayload } from './triggers.ts';

/** A fresh key per dialog opening: every click within it is the same request to the server. */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  // Not a secure context (plain http on a remote host): random bytes as hex instead.
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Run now: an optional JSON payload (prefilled from the workflow's pinned sample, else its last
 * trigger payload), checked
 * before sending; the request carries an Idempotency-Key made when the dialog opened, so a double
 * click (or a retry after a lost answer) starts one run, not two. Modal: labelled, focus kept inside,
 * Escape closes.
 */
export function RunNowDialog({
  workflow,
  opened,
  unsaved,
  onClose,
  onStarted,
}: {
  workflow: Pick<Workflow, 'id' | 'name' | 'samplePayload' | 'samplePin'>;
  opened: boolean;
  /** The editor has unsaved changes: the run uses the saved version. */
  unsaved?: boolean;
  onClose: () => void;
  onStarted: (run: WorkflowRun) => void;
}) {
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={onClose}
      title={<Text fw={650}>Run “{workflow.name}” now</Text>}
      centered
      radius="lg"
      size="lg"
    >
      {/* Mounted per opening (Mantine unmounts a closed modal's content): a new key and a fresh payload each time. */}
      <RunNowForm workflow={workflow} unsaved={unsaved} onClose={onClose} onStarted={onStarted} />
    </Modal>
  );
}

function RunNowForm({
  workflow,
  unsaved,
  onClose,
  onStarted,
}: {
  workflow: Pick<Workflow, 'id' | 'name' | 'samplePayload' | 'samplePin'>;
  unsaved?: boolean;
  onClose: () => void;
  onStarted: (run: WorkflowRun) => void;
}) {
  const [key] = useState(newIdempotencyKey);
  const [text, setText] = useState(() =>
    workflow.samplePayload && Object.keys(workflow.samplePayload).length ? JSON.stringify(workflow.samplePayload, null, 2) : '',
  );
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const check = parsePayload(text);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!check.ok || busy) return;
    setBusy(true);
    setFailed(null);
    try {
      const run = await api.runWorkflow(workflow.id, check.payload, key);
      onClose();
      onStarted(run);
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
          <Alert color="red" variant="light" role="alert" title="The run was not started">
            {failed}
          </Alert>
        )}
        {unsaved && (
          <Alert color="yellow" variant="light" c="dark.8">
            You have unsaved changes: the run uses the last saved version of the workflow.
          </Alert>
        )}
        <Textarea
          label="Payload (JSON)"
          description={
            <>
              Optional: an object that becomes {'{{trigger.…}}'} for the steps. Empty sends {'{}'}.
              {workflow.samplePin ? ' Prefilled from the pinned sample.' : workflow.samplePayload ? ' Prefilled from the last delivery.' : ''}
            </>
          }
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
          <Button type="submit" leftSection={<IconPlayerPlay size={16} />} loading={busy} disabled={!check.ok}>
            Run
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
