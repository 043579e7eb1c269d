import { Alert, Button, Code, CopyButton, Group, Modal, Paper, Radio, Stack, Text, TextInput } from '@mantine/core';
import { IconCheck, IconCopy, IconKey, IconPlus, IconTrash, IconAlertTriangle } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type ApiKey, type CreatedApiKey } from '../api.ts';
import { FormActions, FormError } from '../components/FormActions.tsx';
import { CredentialTable } from '../components/CredentialTable.tsx';
import { PageHeader } from '../components/States.tsx';
import { accessOf } from '../format.ts';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';

const loadKeys = () => api.listApiKeys();

export function ApiKeysPage() {
  const { items, error, reload } = useList<ApiKey>(loadKeys);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);

  const createButton = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
      Create API key
    </Button>
  );

  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys let scripts and MCP clients act as you. Read keys can only look; Read + Write keys can also change your workspace. Treat them like passwords."
        action={items && items.length > 0 ? createButton : undefined}
      />
      <CredentialTable
        label="API keys"
        noun="API keys"
        items={items}
        error={error}
        reload={reload}
        empty={{
          icon: <IconKey size={26} />,
          title: 'No API keys yet',
          body: 'Create a key for a script or an MCP client that cannot sign in through the browser.',
          action: createButton,
        }}
        extra={{ header: 'Key', cell: (k) => <Code>{k.prefix}…</Code> }}
        createdHeader="Created"
        removeAction={() => ({
          verb: 'Revoke',
          icon: <IconTrash size={16} />,
          confirmLabel: 'Revoke key',
          done: 'Revoked',
          consequence: 'Anything using this key stops working at once: its next request gets 401. This cannot be undone.',
        })}
        remove={(k) => api.revokeApiKey(k.id)}
      />
      <CreateKeyModal
        opened={creating}
        onClose={() => setCreating(false)}
        onCreated={(key) => {
          setCreating(false);
          setCreated(key);
          void reload();
        }}
      />
      <SecretModal created={created} onClose={() => setCreated(null)} />
    </>
  );
}

function CreateKeyModal({ opened, onClose, onCreated }: { opened: boolean; onClose: () => void; onCreated: (k: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'write'>('read');
  const { busy, error, run } = useSubmit();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const key = await api.createApiKey(name.trim(), scope);
      setName('');
      setScope('read');
      onCreated(key);
    });
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title={<Text fw={650}>Create API key</Text>} centered radius="lg">
      <form onSubmit={submit}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput
            label="Name"
            description="Where you will use it, e.g. “Claude Desktop” or “nightly export”."
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <Radio.Group label="Access" value={scope} onChange={(v) => setScope(v)} required>
            <Stack gap="xs" mt={6}>
              <Radio value="read" label="Read" description="See projects, tasks, notes, workflows and runs." />
              <Radio value="write" label="Read + Write" description="Also create, change and delete them, and run workflows." />
            </Stack>
          </Radio.Group>
          <FormActions onCancel={onClose} busy={busy} disabled={!name.trim()} mt="xs">
            Create key
          </FormActions>
        </Stack>
      </form>
    </Modal>
  );
}

function SecretModal({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={created !== null}
      onClose={onClose}
      title={<Text fw={650}>Your new API key</Text>}
      centered
      radius="lg"
      closeOnClickOutside={false}
    >
      {created && (
        <Stack>
          <Alert color="yellow" variant="light" icon={<IconAlertTriangle size={18} />}>
            Copy it now: you will not see it again. If you lose it, revoke it and create another.
          </Alert>
          <Paper withBorder p="sm" radius="md" bg="gray.0">
            <Group justify="space-between" wrap="nowrap" gap="xs">
              <Text className="fd-secret" size="sm" data-testid="new-api-key" aria-label="New API key">
                {created.secret}
              </Text>
              <CopyButton value={created.secret}>
                {({ copied, copy }) => (
                  <Button
                    style={{ flexShrink: 0 }}
                    size="xs"
                    variant={copied ? 'light' : 'filled'}
                    color={copied ? 'green' : undefined}
                    leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
                    onClick={copy}
                  >
                    {copied ? 'Copied' : 'Copy'}
                  </Button>
                )}
              </CopyButton>
            </Group>
          </Paper>
          <Text size="sm" c="dimmed">
            “{created.name}” · {accessOf(created.scope)}. Send it as <Code>Authorization: Bearer …</Code>.
          </Text>
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
