import { Alert, Badge, Button, Code, CopyButton, Group, Modal, Paper, Skeleton, Stack, Table, Text, TextInput } from '@mantine/core';
import { IconCheck, IconCopy, IconUserPlus } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { api, type Invite, type SessionInfo, type User } from '../api.ts';
import { ErrorState, PageHeader } from '../components/States.tsx';
import { exact } from '../format.ts';
import { useList } from '../useList.ts';
import { useSubmit } from '../useSubmit.ts';

const loadUsers = () => api.listUsers();

export function MembersPage({ session }: { session: SessionInfo }) {
  const { items, error, reload } = useList<User>(loadUsers);
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
        <Paper withBorder radius="lg" className="fd-table-wrap" tabIndex={0} role="region" aria-label="Members table">
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
              </Table.Tr>
            </Table.Thead>
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
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Paper>
      )}
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
            {inviteError && (
              <Alert color="red" variant="light" role="alert">
                {inviteError}
              </Alert>
            )}
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
