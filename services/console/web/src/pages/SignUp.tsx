import { Anchor, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type SessionInfo, type SetupState } from '../api.ts';
import { AuthCard } from '../components/AuthCard.tsx';
import { Link } from '../router.tsx';
import { useSubmit } from '../useSubmit.ts';
import { MIN_PASSWORD } from './Setup.tsx';
import { FormError } from '../components/FormActions.tsx';

export function SignUpPage({ signup, onDone }: { signup: SetupState['signup']; onDone: (s: SessionInfo) => void }) {
  const invite = new URLSearchParams(window.location.search).get('invite') ?? undefined;
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();
  const allowed = signup === 'open' || (signup === 'invite' && invite);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => onDone(await api.signUp({ name: name.trim(), email: email.trim(), password, ...(invite ? { inviteToken: invite } : {}) })));
  };

  const footer = (
    <>
      Already have an account?{' '}
      <Anchor component={Link} to="/sign-in">
        Sign in
      </Anchor>
    </>
  );
  if (!allowed) {
    return (
      <AuthCard title="Sign-up is closed" subtitle="New accounts on this Flowdesk need an invite link from its owner." footer={footer}>
        <Button component={Link} to="/sign-in" variant="light" fullWidth>
          Back to sign in
        </Button>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Create your account" subtitle={invite ? 'You were invited to this Flowdesk.' : 'Get started with Flowdesk.'} footer={footer}>
      <form onSubmit={submit}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput label="Name" autoComplete="name" required value={name} onChange={(e) => setName(e.currentTarget.value)} autoFocus />
          <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <PasswordInput
            label="Password"
            autoComplete="new-password"
            required
            minLength={MIN_PASSWORD}
            description={`At least ${MIN_PASSWORD} characters.`}
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
          />
          <Button type="submit" loading={busy} fullWidth mt="xs">
            Create account
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
