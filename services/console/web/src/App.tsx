import { Center, Loader } from '@mantine/core';
import { useCallback, useEffect, useState } from 'react';
import { api, type SessionInfo, type SetupState } from './api.ts';
import { Shell } from './components/Shell.tsx';
import { navigate, usePath } from './router.tsx';
import { ErrorState } from './components/States.tsx';
import { PUBLIC_PATHS, PUBLIC_ROUTES } from './routes.tsx';

type State = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; setup: SetupState; session: SessionInfo | null };

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
      if (!PUBLIC_PATHS.includes(path) || path === '/setup') {
        const next = path !== '/' && !PUBLIC_PATHS.includes(path) ? `?next=${encodeURIComponent(path)}` : '';
        navigate(`/sign-in${next}`, { replace: true });
      }
    } else if (PUBLIC_PATHS.includes(path)) {
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
    // Without an owner: setup; else the public page asked for (sign-up), sign-in for any other path.
    const at = state.setup.needsOwner ? '/setup' : path === '/setup' ? '/sign-in' : path;
    const route = PUBLIC_ROUTES.find((r) => r.path === at) ?? PUBLIC_ROUTES.find((r) => r.path === '/sign-in')!;
    return route.page({ setup: state.setup, onDone: signedIn });
  }
  return <Shell session={state.session} path={path} onSignedOut={signedOut} />;
}
