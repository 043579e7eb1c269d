import { Anchor, Button, Code, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type SessionInfo, type SetupState } from '../api.ts';
import { AuthCard } from '../components/AuthCard.tsx';
import { Link } from '../router.tsx';
import { useSubmit } from '../useSubmit.ts';
import { DEV_FILE } from './Setup.tsx';
import { FormError } from '../components/FormActions.tsx';

export function SignInPage({
  signup,
  demoAccount,
  onDone,
}: {
  signup: SetupState['signup'];
  demoAccount?: SetupState['demoAccount'];
  onDone: (s: SessionInfo) => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => onDone(await api.signIn({ email: email.trim(), password })));
  };

  return (
    <AuthCard
      title="Sign in to Flowdesk"
      subtitle="Use the email and password of your account."
      footer={
        signup === 'open' ? (
          <>
            New here?{' '}
            <Anchor component={Link} to="/sign-up">
              Create an account
            </Anchor>
          </>
        ) : signup === 'invite' ? (
          'New here? Ask the owner of this Flowdesk for an invite link.'
        ) : undefined
      }
    >
      <form onSubmit={submit}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} autoFocus />
          <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
          <Button type="submit" loading={busy} fullWidth mt="xs">
            Sign in
          </Button>
        </Stack>
      </form>
      {demoAccount && (
        <Text size="sm" c="dimmed" mt="md">
          Demo account: <strong>{demoAccount.email}</strong>, its password in <Code>{DEV_FILE}</Code>.
        </Text>
      )}
    </AuthCard>
  );
}
