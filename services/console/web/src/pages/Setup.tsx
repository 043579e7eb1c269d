import { Alert, Button, Code, Divider, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type SessionInfo, type SetupState } from '../api.ts';
import { AuthCard } from '../components/AuthCard.tsx';
import { useSubmit } from '../useSubmit.ts';
import { FormError } from '../components/FormActions.tsx';

export const MIN_PASSWORD = 10;

/**
 * Where `npm start`'s demo account lives (docs/console.md, "First run and the demo account"): its
 * password and API keys, the ones the README's curl and MCP examples use.
 */
export const DEV_FILE = '.flowdesk/dev.json';

/**
 * The demo account, offered on the first-run and sign-in pages of `npm start`: what it is, where its
 * password is, and a sign-in form with its email filled in.
 */
export function DemoAccountSignIn({ email, onDone }: { email: string; onDone: (s: SessionInfo) => void }) {
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const { busy, error, run } = useSubmit();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => onDone(await api.signIn({ email, password })));
  };
  return (
    <Alert color="blue" variant="light" title="The demo account is ready" role="region" aria-label="Demo account">
      <Stack gap="xs">
        <Text size="sm">
          <Code>npm start</Code> made <strong>{email}</strong>: a member with a welcome project. Its password and its API keys (<Code>readKey</Code>,{' '}
          <Code>writeKey</Code>) are in <Code>{DEV_FILE}</Code>, so the README&apos;s curl and MCP examples act on its workspace — the one you see when you sign
          in with it.
        </Text>
        {!open ? (
          <Button variant="light" onClick={() => setOpen(true)}>
            Sign in with the demo account
          </Button>
        ) : (
          <form onSubmit={submit}>
            <Stack gap="xs">
              <FormError error={error} boxed />
              <TextInput label="Demo email" value={email} readOnly autoComplete="username" />
              <PasswordInput
                label="Demo password"
                description={`The "password" in ${DEV_FILE}.`}
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
                autoFocus
              />
              <Button type="submit" loading={busy}>
                Sign in as {email}
              </Button>
            </Stack>
          </form>
        )}
      </Stack>
    </Alert>
  );
}

export function SetupPage({ demoAccount, onDone }: { demoAccount?: SetupState['demoAccount']; onDone: (s: SessionInfo) => void }) {
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
      {demoAccount && (
        <Stack gap="md" mb="md">
          <DemoAccountSignIn email={demoAccount.email} onDone={onDone} />
          <Divider label="or create the owner account" labelPosition="center" />
          <Text size="sm" c="dimmed">
            The owner runs this installation: invites people and disables accounts. It gets a workspace of its own, empty, apart from the demo account&apos;s;
            make its API keys under Settings → API keys.
          </Text>
        </Stack>
      )}
      <form onSubmit={submit} noValidate={false}>
        <Stack>
          <FormError error={error} boxed />
          <TextInput label="Name" autoComplete="name" required value={name} onChange={(e) => setName(e.currentTarget.value)} autoFocus={!demoAccount} />
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
