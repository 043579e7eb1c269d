import { ActionIcon, Button, Code, Group, Modal, Paper, PasswordInput, Skeleton, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconLock, IconPencil, IconPlus, IconTrash } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type Credential } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { FormError } from '../components/FormActions.tsx';
import { ago, exact } from '../format.ts';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { TableHead, TableRegion } from '../components/TableRegion.tsx';
import { useConfirmAction } from '../useConfirmAction.ts';

const loadCredentials = () => api.listCredentials();
/** The server's rule (libs/contracts CREDENTIAL_NAME_PATTERN), checked here for a quick hint. */
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Settings → Credentials (docs/credentials.md): secrets workflows use as {{credentials.<name>}}.
 * The value goes in and never comes back: the field is write-only and the API never sends it.
 */
export function CredentialsPage() {
  const { items, error, reload } = useList<Credential>(loadCredentials);
  const [adding, setAdding] = useState(false);
  const [replacing, setReplacing] = useState<Credential | null>(null);
  const deleting = useConfirmAction<Credential>({
    run: (c) => api.deleteCredential(c.name),
    done: (c) => `Deleted “${c.name}”.`,
    failed: 'Could not delete the credential',
    reload,
  });

  const addButton = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setAdding(true)}>
      Add credential
    </Button>
  );

  return (
    <>
      <PageHeader
        title="Credentials"
        description={
          <>
            Secrets your workflows send, such as API tokens. Refer to one in an HTTP Request node as <Code>{'{{credentials.name}}'}</Code>. Values are stored
            encrypted, used only when a workflow runs, and shown as •••• in runs. Nobody can read them back.
          </>
        }
        action={items && items.length > 0 ? addButton : undefined}
      />
      {error && <ErrorState title="Could not load your credentials" message={error} onRetry={() => void reload()} />}
      {!items && !error && <Skeleton role="status" height={160} radius="lg" aria-label="Loading credentials" />}
      {items && items.length === 0 && (
        <Paper withBorder radius="lg">
          <EmptyState icon={<IconLock size={26} />} title="No credentials yet" action={addButton}>
            Add the API token a workflow needs, then refer to it by name instead of pasting it into the node.
          </EmptyState>
        </Paper>
      )}
      {items && items.length > 0 && (
        <TableRegion label="Credentials">
          <Table verticalSpacing="sm" horizontalSpacing="md" highlightOnHover aria-label="Credentials">
            <TableHead columns={['Name', 'Use as', 'Created', 'Updated']} />
            <Table.Tbody>
              {items.map((c) => (
                <Table.Tr key={c.name}>
                  <Table.Td fw={550}>{c.name}</Table.Td>
                  <Table.Td>
                    <Code>{`{{credentials.${c.name}}}`}</Code>
                  </Table.Td>
                  <Table.Td title={exact(c.createdAt)}>{ago(c.createdAt)}</Table.Td>
                  <Table.Td title={exact(c.updatedAt)}>{ago(c.updatedAt)}</Table.Td>
                  <Table.Td ta="right">
                    <Group gap={4} justify="flex-end" wrap="nowrap">
                      <Tooltip label="Replace value">
                        <ActionIcon variant="subtle" aria-label={`Replace the value of ${c.name}`} onClick={() => setReplacing(c)}>
                          <IconPencil size={16} />
                        </ActionIcon>
                      </Tooltip>
                      <Tooltip label="Delete">
                        <ActionIcon variant="subtle" color="red" aria-label={`Delete ${c.name}`} onClick={() => deleting.ask(c)}>
                          <IconTrash size={16} />
                        </ActionIcon>
                      </Tooltip>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      <CredentialModal
        opened={adding}
        onClose={() => setAdding(false)}
        onSaved={(c) => {
          setAdding(false);
          notifications.show({ color: 'green', message: `Saved “${c.name}”.` });
          void reload();
        }}
      />
      <CredentialModal
        opened={replacing !== null}
        replacing={replacing ?? undefined}
        onClose={() => setReplacing(null)}
        onSaved={(c) => {
          setReplacing(null);
          notifications.show({ color: 'green', message: `Replaced the value of “${c.name}”.` });
          void reload();
        }}
      />
      <ConfirmDialog {...deleting.dialog} title={`Delete “${deleting.target?.name ?? ''}”?`} confirmLabel="Delete credential">
        Workflows that use <Code>{`{{credentials.${deleting.target?.name ?? ''}}}`}</Code> fail on their next run until you add it again. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}

/** Add (name + value) or, with `replacing`, a new value for an existing name. The value is never prefilled. */
function CredentialModal({
  opened,
  replacing,
  onClose,
  onSaved,
}: {
  opened: boolean;
  replacing?: Credential;
  onClose: () => void;
  onSaved: (c: Credential) => void;
}) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const { busy, error, run } = useSubmit();
  const nameProblem = !replacing && name !== '' && !NAME.test(name) ? 'Letters, digits, _ and -, starting with a letter (at most 64).' : undefined;
  const close = () => {
    setValue('');
    onClose();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const saved = replacing ? await api.replaceCredential(replacing.name, value) : await api.createCredential(name.trim(), value);
      setName('');
      setValue('');
      onSaved(saved);
    });
  };
  const title = replacing ? `Replace the value of “${replacing.name}”` : 'Add credential';
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={close} title={<Text fw={650}>{title}</Text>} centered radius="lg">
      <form onSubmit={submit} autoComplete="off">
        <Stack>
          <FormError error={error} boxed />
          {!replacing && (
            <TextInput
              label="Name"
              description="How workflows refer to it: {{credentials.name}}"
              required
              maxLength={64}
              value={name}
              error={nameProblem}
              onChange={(e) => setName(e.currentTarget.value)}
              data-autofocus
            />
          )}
          <PasswordInput
            label="Value"
            description="Stored encrypted. It cannot be shown again, only replaced."
            required
            maxLength={8192}
            value={value}
            autoComplete="new-password"
            onChange={(e) => setValue(e.currentTarget.value)}
            data-autofocus={replacing ? true : undefined}
          />
          <Group justify="flex-end" mt="xs">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={busy} disabled={!value || (!replacing && (!name.trim() || nameProblem !== undefined))}>
              {replacing ? 'Replace value' : 'Save credential'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
