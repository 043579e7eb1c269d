import { Button, Divider, Group, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import { api, type SessionInfo } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { PageHeader } from '../components/States.tsx';
import { FormError } from '../components/FormActions.tsx';
import { exact } from '../format.ts';
import { useSubmit } from '../useSubmit.ts';
import { MIN_PASSWORD } from './Setup.tsx';

export function ProfilePage({ session, onSignedOut }: { session: SessionInfo; onSignedOut: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [everywhere, setEverywhere] = useState(false);
  const { busy, error, setError, run } = useSubmit();
  const mismatch = confirm.length > 0 && confirm !== next;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (next !== confirm) return setError('The new passwords do not match');
    if (next.length < MIN_PASSWORD) return setError(`Use at least ${MIN_PASSWORD} characters`);
    void run(async () => {
      await api.changePassword(current, next);
      setCurrent('');
      setNext('');
      setConfirm('');
      notifications.show({ color: 'green', message: 'Your password is changed.' });
    });
  };

  return (
    <>
      <PageHeader title="Profile" description="Your account and how you sign in." />
      <Stack gap="lg">
        <Paper withBorder radius="lg" p="lg">
          <Title order={2} size="h5" mb="sm">
            Account
          </Title>
          <Stack gap={6}>
            <Group gap="xs">
              <Text size="sm" c="dimmed" w={120}>
                Name
              </Text>
              <Text size="sm">{session.user.name}</Text>
            </Group>
            <Group gap="xs">
              <Text size="sm" c="dimmed" w={120}>
                Email
              </Text>
              <Text size="sm">{session.user.email}</Text>
            </Group>
            <Group gap="xs">
              <Text size="sm" c="dimmed" w={120}>
                Role
              </Text>
              <Text size="sm" tt="capitalize">
                {session.user.role}
              </Text>
            </Group>
            {session.session && (
              <Group gap="xs">
                <Text size="sm" c="dimmed" w={120}>
                  This session
                </Text>
                <Text size="sm">ends {exact(session.session.expiresAt)} at the latest</Text>
              </Group>
            )}
          </Stack>
        </Paper>

        <Paper withBorder radius="lg" p="lg">
          <Title order={2} size="h5" mb={4}>
            Change password
          </Title>
          <Text size="sm" c="dimmed" mb="md">
            Your other sessions are signed out when the password changes.
          </Text>
          <form onSubmit={submit}>
            <Stack maw={420}>
              <FormError error={error} boxed />
              <PasswordInput
                label="Current password"
                autoComplete="current-password"
                required
                value={current}
                onChange={(e) => setCurrent(e.currentTarget.value)}
              />
              <PasswordInput
                label="New password"
                autoComplete="new-password"
                required
                minLength={MIN_PASSWORD}
                description={`At least ${MIN_PASSWORD} characters.`}
                value={next}
                onChange={(e) => setNext(e.currentTarget.value)}
              />
              <PasswordInput
                label="Repeat new password"
                autoComplete="new-password"
                required
                value={confirm}
                error={mismatch ? 'Does not match' : undefined}
                onChange={(e) => setConfirm(e.currentTarget.value)}
              />
              <Group>
                <Button type="submit" loading={busy}>
                  Change password
                </Button>
              </Group>
            </Stack>
          </form>
        </Paper>

        <Paper withBorder radius="lg" p="lg">
          <Title order={2} size="h5" mb={4}>
            Sessions
          </Title>
          <Text size="sm" c="dimmed" mb="md">
            Signed in on a computer you no longer use? End every session of your account, this one included. API keys and connected apps are not affected.
          </Text>
          <Divider mb="md" />
          <Button variant="light" color="red" onClick={() => setEverywhere(true)}>
            Sign out everywhere
          </Button>
        </Paper>
      </Stack>
      <ConfirmDialog
        opened={everywhere}
        title="Sign out everywhere?"
        confirmLabel="Sign out everywhere"
        onClose={() => setEverywhere(false)}
        onConfirm={async () => {
          try {
            await api.signOutEverywhere();
            notifications.show({ message: 'Every session of your account has ended.' });
            onSignedOut();
          } catch (err) {
            notifications.show({ color: 'red', title: 'That did not work', message: (err as Error).message });
          }
        }}
      >
        Every browser signed in to your account, including this one, will have to sign in again. API keys and connected apps keep working.
      </ConfirmDialog>
    </>
  );
}
