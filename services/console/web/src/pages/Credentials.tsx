import { ActionIcon, Badge, Button, Code, Group, Modal, Paper, PasswordInput, Select, Skeleton, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconLock, IconPencil, IconPlugConnected, IconPlus, IconStethoscope, IconTrash } from '@tabler/icons-react';
import { useEffect, useState, type FormEvent } from 'react';
import {
  CREDENTIAL_TYPES,
  credentialSteps,
  credentialType,
  DEFAULT_CREDENTIAL_TYPE,
  MAX_CREDENTIAL_VALUE_LENGTH,
  type CredentialType,
  type CredentialTypeDefinition,
} from '@flowdesk/contracts/credential-types';
import { api, type Credential } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { FormError } from '../components/FormActions.tsx';
import { ago, exact } from '../format.ts';
import { useList } from '../useList.ts';
import { darkText } from '../components/RunStatus.tsx';
import { useSubmit } from '../useSubmit.ts';
import { TableHead, TableRegion } from '../components/TableRegion.tsx';
import { useConfirmAction } from '../useConfirmAction.ts';

const loadCredentials = () => api.listCredentials();
/** "A, B or C" (the steps that take a credential, from the registry). */
export const stepList = (labels: readonly string[]): string =>
  labels.length < 2 ? (labels[0] ?? '') : `${labels.slice(0, -1).join(', ')} or ${labels.at(-1)}`;
/** The server's rule (libs/contracts CREDENTIAL_NAME_PATTERN), checked here for a quick hint. */
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Settings → Credentials (docs/credentials.md): secrets workflows use as {{credentials.<name>}}, and
 * typed credentials (an API key in a header, a bearer token, an SMTP server…) a node names in its
 * Credential field. Secret fields go in and never come back: write-only, and the API never sends them.
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

  // Back from an OAuth2 provider's consent page (the engine's callback sends the browser here): say how it went, once.
  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    const connected = params.get('connected');
    const failed = params.get('connect_error');
    if (connected === null && failed === null) return;
    if (connected !== null) notifications.show({ color: 'green', message: `Connected “${connected}”.` });
    if (failed !== null) notifications.show({ color: 'red', title: 'Could not connect', message: failed, autoClose: false });
    window.history.replaceState(null, '', window.location.pathname);
  }, []);
  const [pending, setPending] = useState<string | null>(null);
  const connect = async (c: Credential) => {
    setPending(c.name);
    try {
      const { authorizeUrl } = await api.connectCredential(c.name);
      window.location.assign(authorizeUrl);
    } catch (err) {
      setPending(null);
      notifications.show({ color: 'red', title: `Could not connect “${c.name}”`, message: (err as Error).message });
    }
  };
  const testIt = async (c: Credential) => {
    setPending(c.name);
    try {
      const result = await api.testCredential(c.name);
      notifications.show({ color: result.ok ? 'green' : 'red', title: `${c.name}: ${result.ok ? 'works' : 'does not work'}`, message: result.message });
      void reload();
    } catch (err) {
      notifications.show({ color: 'red', title: `Could not test “${c.name}”`, message: (err as Error).message });
    } finally {
      setPending(null);
    }
  };

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
            Secrets your workflows send, such as API tokens. Refer to a secret value in a node as <Code>{'{{credentials.name}}'}</Code>; choose a credential in
            the Credential field of {stepList(credentialSteps())} steps. Secrets are stored encrypted, used only when a workflow runs, and shown as •••• in
            runs. Nobody can read them back.
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
            <TableHead columns={['Name', 'Type', 'Use as', 'Created', 'Updated']} />
            <Table.Tbody>
              {items.map((c) => (
                <Table.Tr key={c.name}>
                  <Table.Td fw={550}>{c.name}</Table.Td>
                  <Table.Td>
                    <Stack gap={4} align="flex-start">
                      <span>{credentialType(c.type)?.label ?? c.type}</span>
                      {c.connection && <ConnectionBadge name={c.name} connection={c.connection} />}
                    </Stack>
                  </Table.Td>
                  <Table.Td>
                    {c.type === 'secret' ? (
                      <Code>{`{{credentials.${c.name}}}`}</Code>
                    ) : (
                      <Text size="sm">
                        {credentialType(c.type)?.usedBy ?? 'A step'}: Credential <Code>{c.name}</Code>
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td title={exact(c.createdAt)}>{ago(c.createdAt)}</Table.Td>
                  <Table.Td title={exact(c.updatedAt)}>{ago(c.updatedAt)}</Table.Td>
                  <Table.Td ta="right">
                    <Group gap={4} justify="flex-end" wrap="nowrap">
                      {credentialType(c.type)?.connects?.(c.fields) && (
                        <Button
                          size="compact-sm"
                          variant={c.connection?.status === 'connected' ? 'default' : 'filled'}
                          leftSection={<IconPlugConnected size={14} />}
                          loading={pending === c.name}
                          aria-label={`${c.connection?.status === 'not_connected' ? 'Connect' : 'Reconnect'} ${c.name}`}
                          onClick={() => void connect(c)}
                        >
                          {c.connection?.status === 'not_connected' ? 'Connect' : 'Reconnect'}
                        </Button>
                      )}
                      {credentialType(c.type)?.test && (
                        <Tooltip label="Test">
                          <ActionIcon variant="subtle" aria-label={`Test ${c.name}`} loading={pending === c.name} onClick={() => void testIt(c)}>
                            <IconStethoscope size={16} />
                          </ActionIcon>
                        </Tooltip>
                      )}
                      <Tooltip label={c.type === 'secret' ? 'Replace value' : 'Edit'}>
                        <ActionIcon
                          variant="subtle"
                          aria-label={c.type === 'secret' ? `Replace the value of ${c.name}` : `Edit ${c.name}`}
                          onClick={() => setReplacing(c)}
                        >
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
          notifications.show({ color: 'green', message: c.type === 'secret' ? `Replaced the value of “${c.name}”.` : `Saved “${c.name}”.` });
          void reload();
        }}
      />
      <ConfirmDialog {...deleting.dialog} title={`Delete “${deleting.target?.name ?? ''}”?`} confirmLabel="Delete credential">
        Workflows that use <Code>{deleting.target?.type === 'secret' ? `{{credentials.${deleting.target.name}}}` : (deleting.target?.name ?? '')}</Code> fail on
        their next run until you add it again. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}

const CONNECTION_LABELS = { connected: 'Connected', not_connected: 'Not connected', needs_reconnect: 'Needs reconnecting' } as const;
const CONNECTION_COLORS = { connected: 'green', not_connected: 'gray', needs_reconnect: 'red' } as const;

/** An OAuth2 credential's standing: connected (until when), not yet, or needs reconnecting (and why). */
function ConnectionBadge({ name, connection }: { name: string; connection: NonNullable<Credential['connection']> }) {
  const detail = connection.problem ?? (connection.expiresAt ? `Token valid until ${exact(connection.expiresAt)}` : undefined);
  return (
    <Group gap={6} wrap="wrap">
      <Badge
        color={CONNECTION_COLORS[connection.status]}
        variant="light"
        radius="sm"
        size="sm"
        tt="none"
        styles={darkText(CONNECTION_COLORS[connection.status])}
        aria-label={`${name}: ${CONNECTION_LABELS[connection.status]}`}
      >
        {CONNECTION_LABELS[connection.status]}
      </Badge>
      {connection.status === 'needs_reconnect' && detail && (
        <Text size="xs" c="dimmed">
          {detail}
        </Text>
      )}
    </Group>
  );
}

/** The fields a person fills in (a managed one, an OAuth2 credential's tokens, is the service's). */
const formFieldsOf = (type: CredentialTypeDefinition) => type.fields.filter((f) => !f.managed);

/** The form's value of every field of a type: defaults for a new credential, the stored non-secret fields when editing. */
function initialFields(type: CredentialTypeDefinition, editing?: Credential): Record<string, string> {
  return Object.fromEntries(formFieldsOf(type).map((f) => [f.key, f.secret ? '' : (editing?.fields[f.key] ?? f.default ?? '')]));
}

/**
 * Add (name, type and the type's fields) or, with `replacing`, new fields for an existing name. The
 * form is the registry's (libs/contracts credential-types.ts): one input per field of the type, secret
 * fields write-only (never prefilled: the API never sends them; left empty when editing, they keep
 * their stored value, and say whether one is set).
 */
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
  const [typeId, setTypeId] = useState<CredentialType>(DEFAULT_CREDENTIAL_TYPE);
  const type = credentialType(replacing?.type ?? typeId) ?? credentialType(DEFAULT_CREDENTIAL_TYPE)!;
  const [fields, setFields] = useState<Record<string, string>>(() => initialFields(type, replacing));
  const [shownFor, setShownFor] = useState<string | undefined>(undefined);
  // A new dialog (another credential, or another type picked) starts from that one's fields.
  const key = `${opened}:${replacing?.name ?? ''}:${type.id}`;
  if (shownFor !== key) {
    setShownFor(key);
    setFields(initialFields(type, replacing));
  }
  const { busy, error, run } = useSubmit();
  const nameProblem = !replacing && name !== '' && !NAME.test(name) ? 'Letters, digits, _ and -, starting with a letter (at most 64).' : undefined;
  const plainSecret = type.id === 'secret';
  const missing = formFieldsOf(type).some((f) => !f.optional && !fields[f.key] && !(f.secret && replacing?.secrets[f.key]) && !f.default);
  const close = () => {
    setFields(initialFields(type, replacing));
    onClose();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Empty secret fields of an edit are left out: the server keeps their stored values.
    const sent = Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== '' || !type.fields.find((f) => f.key === k)?.secret));
    void run(async () => {
      const saved = replacing
        ? await api.replaceCredential(replacing.name, plainSecret ? { value: fields.value ?? '' } : { fields: sent })
        : await api.createCredential(
            plainSecret ? { name: name.trim(), value: fields.value ?? '' } : { name: name.trim(), type: type.id as CredentialType, fields: sent },
          );
      setName('');
      setFields(initialFields(type));
      onSaved(saved);
    });
  };
  const title = replacing ? (plainSecret ? `Replace the value of “${replacing.name}”` : `Edit “${replacing.name}”`) : 'Add credential';
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={close} title={<Text fw={650}>{title}</Text>} centered radius="lg">
      <form onSubmit={submit} autoComplete="off">
        <Stack>
          <FormError error={error} boxed />
          {!replacing && (
            <>
              <TextInput
                label="Name"
                description={plainSecret ? 'How workflows refer to it: {{credentials.name}}' : "How a node's Credential field names it"}
                required
                maxLength={64}
                value={name}
                error={nameProblem}
                onChange={(e) => setName(e.currentTarget.value)}
                data-autofocus
              />
              <Select
                label="Type"
                description={type.description}
                data={CREDENTIAL_TYPES.map((t) => ({ value: t.id, label: t.label }))}
                value={type.id}
                allowDeselect={false}
                onChange={(v) => v && setTypeId(v as CredentialType)}
              />
            </>
          )}
          {replacing?.connection && replacing.connection.status !== 'not_connected' && type.connects?.(replacing.fields) && (
            <Text size="sm" c="dimmed">
              Saving disconnects it: Connect it again afterwards.
            </Text>
          )}
          {formFieldsOf(type).map((f, i) => {
            const set = (value: string) => setFields((old) => ({ ...old, [f.key]: value }));
            const common = {
              label: f.label,
              required: !f.optional && !(f.secret && replacing?.secrets[f.key]),
              value: fields[f.key] ?? '',
              placeholder: f.placeholder,
            };
            const autofocus = replacing && i === 0 ? true : undefined;
            if (f.secret)
              return (
                <PasswordInput
                  key={f.key}
                  {...common}
                  description={
                    replacing?.secrets[f.key] && !plainSecret
                      ? 'Set. Leave empty to keep it; stored encrypted, it cannot be shown again.'
                      : 'Stored encrypted. It cannot be shown again, only replaced.'
                  }
                  maxLength={MAX_CREDENTIAL_VALUE_LENGTH}
                  autoComplete="new-password"
                  onChange={(e) => set(e.currentTarget.value)}
                  data-autofocus={autofocus}
                />
              );
            if (f.kind === 'select')
              return (
                <Select key={f.key} {...common} description={f.description} data={[...(f.options ?? [])]} allowDeselect={false} onChange={(v) => v && set(v)} />
              );
            return (
              <TextInput
                key={f.key}
                {...common}
                description={f.description}
                inputMode={f.kind === 'number' ? 'numeric' : undefined}
                maxLength={MAX_CREDENTIAL_VALUE_LENGTH}
                onChange={(e) => set(e.currentTarget.value)}
                data-autofocus={autofocus}
              />
            );
          })}
          <Group justify="flex-end" mt="xs">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={busy} disabled={missing || (!replacing && (!name.trim() || nameProblem !== undefined))}>
              {replacing ? (plainSecret ? 'Replace value' : 'Save changes') : 'Save credential'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
