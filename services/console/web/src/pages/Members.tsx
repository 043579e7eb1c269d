import { Badge, Button, Code, CopyButton, Group, Modal, Paper, Skeleton, Stack, Table, Text, TextInput } from '@mantine/core';
import { darkText } from '../components/RunStatus.tsx';
import { IconCheck, IconCopy, IconUserPlus } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type Invite, type ListedUser, type SessionInfo } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { ErrorState, PageHeader } from '../components/States.tsx';
import { FormError } from '../components/FormActions.tsx';
import { exact } from '../format.ts';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';
import { TableHead, TableRegion } from '../components/TableRegion.tsx';
import { actAndReload, useConfirmAction } from '../useConfirmAction.ts';

const loadUsers = () => api.listUsers();

export function MembersPage({ session }: { session: SessionInfo }) {
  const { items, error, reload } = useList<ListedUser>(loadUsers);
  const who = (u: ListedUser) => u.name || u.email;
  const disabling = useConfirmAction<ListedUser>({
    run: (u) => api.disableUser(u.id),
    done: (u) => `Disabled “${who(u)}”.`,
    failed: 'That did not work',
    reload,
  });
  const enable = (u: ListedUser) => actAndReload(() => api.enableUser(u.id), `Enabled “${who(u)}” again.`, 'That did not work', reload);
  const [inviting, setInviting] = useState(false);
  const [invite, setInvite] = useState<Invite | null>(null);
  const [email, setEmail] = useState('');
  const { busy, error: inviteError, run } = useSubmit();
  const link = invite ? `${window.location.origin}/sign-up?invite=${encodeURIComponent(invite.token)}` : '';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      setInvite(await api.invite(email.trim()));
      setEmail('');
      setInviting(false);
    });
  };

  return (
    <>
      <PageHeader
        title="Members"
        description="The people with an account on this Flowdesk. Each has their own workspace, keys and connected apps."
        action={
          <Button leftSection={<IconUserPlus size={16} />} onClick={() => setInviting(true)}>
            Invite someone
          </Button>
        }
      />
      {error && <ErrorState title="Could not load the members" message={error} onRetry={() => void reload()} />}
      {!items && !error && <Skeleton role="status" height={120} radius="lg" aria-label="Loading members" />}
      {items && (
        <TableRegion label="Members">
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Members">
            <TableHead columns={['Name', 'Email', 'Role', 'Status']} />
            <Table.Tbody>
              {items.map((u) => (
                <Table.Tr key={u.id}>
                  <Table.Td fw={550}>
                    {u.name}{' '}
                    {u.id === session.user.id && (
                      <Text span c="dimmed" size="sm">
                        (you)
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{u.email}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={u.role === 'owner' ? 'indigo' : 'gray'} tt="capitalize">
                      {u.role}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={u.disabled ? 'red' : 'green'} styles={darkText(u.disabled ? 'red' : 'green')}>
                      {u.disabled ? 'Disabled' : 'Active'}
                    </Badge>
                  </Table.Td>
                  <Table.Td ta="right">
                    {u.id !== session.user.id &&
                      (u.disabled ? (
                        <Button size="compact-sm" variant="default" aria-label={`Enable ${who(u)}`} onClick={() => void enable(u)}>
                          Enable
                        </Button>
                      ) : (
                        <Button size="compact-sm" variant="default" aria-label={`Disable ${who(u)}`} onClick={() => disabling.ask(u)}>
                          Disable
                        </Button>
                      ))}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      <ConfirmDialog {...disabling.dialog} title={`Disable “${disabling.target ? who(disabling.target) : ''}”?`} confirmLabel="Disable account">
        They are signed out everywhere and cannot sign in; their API keys and connected apps stop working until you enable them again. Their data stays.
      </ConfirmDialog>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={inviting}
        onClose={() => setInviting(false)}
        title={<Text fw={650}>Invite someone</Text>}
        centered
        radius="lg"
      >
        <form onSubmit={submit}>
          <Stack>
            <FormError error={inviteError} boxed />
            <TextInput label="Email" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus />
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setInviting(false)}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Create invite link
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={invite !== null}
        onClose={() => setInvite(null)}
        title={<Text fw={650}>Invite link for {invite?.email}</Text>}
        centered
        radius="lg"
      >
        <Stack>
          <Text size="sm" c="dimmed">
            Send this link to {invite?.email}. It works once, until {exact(invite?.expiresAt)}.
          </Text>
          <Paper withBorder p="sm" radius="md" bg="gray.0">
            <Code className="fd-secret" bg="transparent">
              {link}
            </Code>
          </Paper>
          <Group justify="flex-end">
            <CopyButton value={link}>
              {({ copied, copy }) => (
                <Button leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />} color={copied ? 'green' : undefined} onClick={copy}>
                  {copied ? 'Copied' : 'Copy link'}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
