import { Alert, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type SessionInfo } from '../api.ts';
import { AuthCard } from '../components/AuthCard.tsx';
import { useSubmit } from '../useSubmit.ts';

export const MIN_PASSWORD = 10;

export function SetupPage({ onDone }: { onDone: (s: SessionInfo) => void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();
  const short = password.length > 0 && password.length < MIN_PASSWORD;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => onDone(await api.createOwner({ name: name.trim(), email: email.trim(), password })));
  };

  return (
    <AuthCard
      title="Create the owner account"
      subtitle="Welcome to Flowdesk. This first account owns this installation: it can invite people and manage sign-up."
    >
      <form onSubmit={submit} noValidate={false}>
        <Stack>
          {error && (
            <Alert color="red" variant="light" role="alert">
              {error}
            </Alert>
          )}
          <TextInput label="Name" autoComplete="name" required value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus autoFocus />
          <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <PasswordInput
            label="Password"
            autoComplete="new-password"
            required
            minLength={MIN_PASSWORD}
            description={`At least ${MIN_PASSWORD} characters.`}
            error={short ? `Use at least ${MIN_PASSWORD} characters` : undefined}
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
