import { Center, Loader } from '@mantine/core';
import { useCallback, useEffect, useState } from 'react';
import { api, type SessionInfo, type SetupState } from './api.ts';
import { Shell } from './components/Shell.tsx';
import { navigate, usePath } from './router.tsx';
import { SetupPage } from './pages/Setup.tsx';
import { SignInPage } from './pages/SignIn.tsx';
import { SignUpPage } from './pages/SignUp.tsx';
import { ErrorState } from './components/States.tsx';

type State = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; setup: SetupState; session: SessionInfo | null };

const PUBLIC_PAGES = ['/sign-in', '/sign-up', '/setup'];

export function App() {
  const path = usePath();
  const [state, setState] = useState<State>({ kind: 'loading' });

  const load = useCallback(
    () =>
      Promise.all([api.setup(), api.session()]).then(
        ([setup, session]) => setState({ kind: 'ready', setup, session }),
        (err: unknown) => setState({ kind: 'failed', message: (err as Error).message }),
      ),
    [],
  );

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    api.onSignedOut = () => {
      setState((s) => (s.kind === 'ready' ? { ...s, session: null } : s));
    };
  }, []);

  const signedIn = useCallback((session: SessionInfo) => {
    // The owner was created, or someone signed in: either way the owner form is done with for this tab.
    setState((s) =>
      s.kind === 'ready' ? { setup: { ...s.setup, needsOwner: s.setup.needsOwner && session.user.role !== 'owner' }, session, kind: 'ready' } : s,
    );
    const next = new URLSearchParams(window.location.search).get('next');
    navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
  }, []);

  const signedOut = useCallback(() => {
    setState((s) => (s.kind === 'ready' ? { ...s, session: null } : s));
    navigate('/sign-in', { replace: true });
  }, []);

  // Where someone belongs: the owner form on a fresh install, sign-in without a session, the app with one.
  useEffect(() => {
    if (state.kind !== 'ready') return;
    if (state.setup.needsOwner && !state.session) {
      if (path !== '/setup') navigate('/setup', { replace: true });
    } else if (!state.session) {
      if (!PUBLIC_PAGES.includes(path) || path === '/setup') {
        const next = path !== '/' && !PUBLIC_PAGES.includes(path) ? `?next=${encodeURIComponent(path)}` : '';
        navigate(`/sign-in${next}`, { replace: true });
      }
    } else if (PUBLIC_PAGES.includes(path)) {
      navigate('/', { replace: true });
    }
  }, [state, path]);

  if (state.kind === 'loading') {
    return (
      <Center h="100vh" aria-busy="true">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (state.kind === 'failed') {
    return (
      <Center h="100vh" p="md">
        <ErrorState title="Flowdesk is not answering" message={state.message} onRetry={() => void load()} />
      </Center>
    );
  }
  if (!state.session) {
    // Signed in (the demo account, before anyone created the owner) is the app, not the owner form.
    if (state.setup.needsOwner) return <SetupPage demoAccount={state.setup.demoAccount} onDone={signedIn} />;
    if (path === '/sign-up') return <SignUpPage signup={state.setup.signup} onDone={signedIn} />;
    return <SignInPage signup={state.setup.signup} demoAccount={state.setup.demoAccount} onDone={signedIn} />;
  }
  return <Shell session={state.session} path={path} onSignedOut={signedOut} />;
}
