/**
 * Export (download) and Import (a chosen file or pasted JSON) of workflow files
 * (docs/workflow-export.md), on the workflows list and in the editor. After an import the new
 * workflow (inactive) is shown with what could not be taken as it was, per step.
 */
import { Alert, Badge, Button, FileButton, Group, List, Modal, Stack, Text, Textarea } from '@mantine/core';
import { IconUpload } from '@tabler/icons-react';
import { useState } from 'react';
import { workflowFileName, type WorkflowImportProblem } from '@flowdesk/contracts';
import { api, type WorkflowImportResult } from '../api.ts';
import { FormActions, FormError } from '../components/FormActions.tsx';
import { textOn } from '../components/RunStatus.tsx';
import { navigate } from '../router.tsx';
import { useSubmit } from '../useSubmit.ts';
import { importProblems, readWorkflowFile } from './import-file.ts';

/** Downloads the workflow's file (the browser saves it as <name>.flowdesk.json). */
export async function downloadWorkflow(w: { id: string; name: string }): Promise<void> {
  const file = await api.exportWorkflow(w.id);
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(file, null, 2)}\n`], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = workflowFileName(w.name);
  document.body.append(a);
  a.click();
  a.remove();
  // After the click has handed the blob to the download.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function ImportWorkflowModal({ opened, onClose, onImported }: { opened: boolean; onClose: () => void; onImported?: () => void }) {
  const [text, setText] = useState('');
  const [done, setDone] = useState<{ result: WorkflowImportResult; problems: WorkflowImportProblem[] } | null>(null);
  const { busy, error, setError, run } = useSubmit();
  const close = () => {
    setText('');
    setDone(null);
    setError(null);
    onClose();
  };
  const choose = (file: File | null) => {
    if (!file) return;
    void file.text().then(setText, (err: unknown) => setError(`Could not read ${file.name}: ${(err as Error).message}`));
  };
  const submit = () =>
    run(async () => {
      const read = readWorkflowFile(text);
      if ('error' in read) throw new Error(read.error);
      const result = await api.importWorkflow(read.file);
      const names = await api.listCredentialNames();
      setDone({ result, problems: importProblems(result, names) });
      onImported?.();
    });
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={close}
      title={<Text fw={650}>Import a workflow</Text>}
      centered
      radius="lg"
      size="lg"
    >
      {done ? (
        <Stack>
          <Text>
            Imported <b>“{done.result.workflow.name}”</b> as a new workflow.{' '}
            <Badge color="gray" variant="light" tt="none">
              Inactive
            </Badge>
          </Text>
          {done.result.workflow.webhook && (
            <Text size="sm" c="dimmed">
              It has its own webhook URL and secret (see its trigger).
            </Text>
          )}
          {done.problems.length === 0 ? (
            <Text size="sm">Everything in the file was taken as it was.</Text>
          ) : (
            <Alert color="yellow" variant="light" styles={{ title: { color: textOn('yellow') } }} title="Needs a look before you activate it" role="status">
              <List size="sm" spacing={4} aria-label="Import problems">
                {done.problems.map((p, i) => (
                  <List.Item key={i}>
                    {p.kind === 'left_out' ? 'Left out: ' : 'To change: '}
                    {p.message}
                  </List.Item>
                ))}
              </List>
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Done
            </Button>
            <Button
              onClick={() => {
                const id = done.result.workflow.id;
                close();
                navigate(`/workflows/${id}`);
              }}
            >
              Open the workflow
            </Button>
          </Group>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <Stack>
            <FormError error={error} boxed />
            <Text size="sm" c="dimmed">
              A Flowdesk workflow file (Export on a workflow), or a workflow downloaded from n8n (its core nodes are converted; the rest is listed). It becomes
              a new, inactive workflow; credentials are matched by name, and a webhook gets its own URL and secret.
            </Text>
            <Textarea
              label="Workflow file (JSON)"
              placeholder='{ "format": "flowdesk.workflow", … }'
              autosize
              minRows={6}
              maxRows={14}
              value={text}
              onChange={(e) => setText(e.currentTarget.value)}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
              data-autofocus
            />
            <Group justify="space-between">
              <FileButton onChange={choose} accept="application/json,.json">
                {(props) => (
                  <Button {...props} variant="subtle" leftSection={<IconUpload size={16} />}>
                    Choose a file…
                  </Button>
                )}
              </FileButton>
              <FormActions onCancel={close} busy={busy} disabled={!text.trim()}>
                Import
              </FormActions>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
