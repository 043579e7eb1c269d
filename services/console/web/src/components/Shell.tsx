import { AppShell, Avatar, Burger, Group, NavLink, ScrollArea, Stack, Text, UnstyledButton, Menu, Divider } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { IconApi, IconApps, IconChevronDown, IconHome, IconKey, IconLock, IconLogout, IconSitemap, IconUser, IconUsers } from '@tabler/icons-react';
import { useEffect, type ReactNode } from 'react';
import { api, type SessionInfo } from '../api.ts';
import { onLinkClick } from '../router.tsx';
import { ApiKeysPage } from '../pages/ApiKeys.tsx';
import { ConnectedAppsPage } from '../pages/ConnectedApps.tsx';
import { CredentialsPage } from '../pages/Credentials.tsx';
import { MembersPage } from '../pages/Members.tsx';
import { NotFoundPage } from '../pages/NotFound.tsx';
import { OverviewPage } from '../pages/Overview.tsx';
import { ProfilePage } from '../pages/Profile.tsx';
import { WorkflowsPage } from '../pages/Workflows.tsx';
import { WorkflowEditorPage } from '../pages/WorkflowEditor.tsx';
import { Logo } from './Logo.tsx';
import { VIEW_NAV, viewFor } from '../views/routes.tsx';

interface Page {
  path: string;
  label: string;
  icon: ReactNode;
  title: string;
  ownerOnly?: boolean;
}

const MAIN: Page[] = [{ path: '/', label: 'Overview', icon: <IconHome size={18} stroke={1.6} />, title: 'Overview' }];
const WORKSPACE: Page[] = [{ path: '/workflows', label: 'Workflows', icon: <IconSitemap size={18} stroke={1.6} />, title: 'Workflows' }];
const SETTINGS: Page[] = [
  { path: '/settings/profile', label: 'Profile', icon: <IconUser size={18} stroke={1.6} />, title: 'Profile' },
  { path: '/settings/api-keys', label: 'API keys', icon: <IconKey size={18} stroke={1.6} />, title: 'API keys' },
  { path: '/settings/credentials', label: 'Credentials', icon: <IconLock size={18} stroke={1.6} />, title: 'Credentials' },
  { path: '/settings/connected-apps', label: 'Connected Apps', icon: <IconApps size={18} stroke={1.6} />, title: 'Connected Apps' },
  { path: '/settings/members', label: 'Members', icon: <IconUsers size={18} stroke={1.6} />, title: 'Members', ownerOnly: true },
];

export function Shell({ session, path, onSignedOut }: { session: SessionInfo; path: string; onSignedOut: () => void }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const desktop = useMediaQuery('(min-width: 48em)', true);
  const isOwner = session.user.role === 'owner';
  const settings = SETTINGS.filter((p) => !p.ownerOnly || isOwner);
  const current = [...MAIN, ...WORKSPACE, ...settings].find((p) => p.path === path);
  // The editor (/workflows/:id) has its own title and fills the main area; /workflows/:id/runs is a view.
  const editing = /^\/workflows\/([^/]+)$/.exec(path)?.[1];
  const view = current || editing ? null : viewFor(path);
  const title = current?.title ?? view?.title;

  useEffect(() => {
    if (editing) return close();
    document.title = title ? `${title} · Flowdesk` : 'Flowdesk';
    close();
  }, [title, editing, path, close]);

  const signOut = async () => {
    try {
      await api.signOut();
    } catch {
      // the session may already be gone: signed out either way
    }
    notifications.show({ message: 'You are signed out.' });
    onSignedOut();
  };

  const link = (p: Pick<Page, 'path' | 'label' | 'icon'>) => (
    <NavLink
      key={p.path}
      href={p.path}
      onClick={onLinkClick(p.path)}
      label={p.label}
      leftSection={p.icon}
      active={p.path === path || view?.nav === p.path || (p.path === '/workflows' && editing !== undefined)}
      aria-current={p.path === path ? 'page' : undefined}
      variant="light"
      style={{ borderRadius: 8 }}
    />
  );

  let page: ReactNode;
  switch (editing ? '/workflows/:id' : current?.path) {
    case '/workflows':
      page = <WorkflowsPage />;
      break;
    case '/workflows/:id':
      page = <WorkflowEditorPage key={editing} id={decodeURIComponent(editing!)} />;
      break;
    case '/':
      page = <OverviewPage session={session} />;
      break;
    case '/settings/profile':
      page = <ProfilePage session={session} onSignedOut={onSignedOut} />;
      break;
    case '/settings/api-keys':
      page = <ApiKeysPage />;
      break;
    case '/settings/credentials':
      page = <CredentialsPage />;
      break;
    case '/settings/connected-apps':
      page = <ConnectedAppsPage />;
      break;
    case '/settings/members':
      page = <MembersPage session={session} />;
      break;
    default:
      page = view?.page ?? <NotFoundPage />;
  }

  return (
    <AppShell header={{ height: 56, collapsed: desktop }} navbar={{ width: 256, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding={0}>
      <AppShell.Header hiddenFrom="sm">
        <Group h="100%" px="md" justify="space-between">
          <Logo />
          <Burger opened={opened} onClick={toggle} size="sm" aria-label={opened ? 'Close navigation' : 'Open navigation'} />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="sm" aria-label="Main navigation" style={{ background: 'var(--mantine-color-white)' }}>
        <AppShell.Section visibleFrom="sm" px={6} pt={4} pb="md">
          <Logo />
        </AppShell.Section>
        <AppShell.Section grow component={ScrollArea}>
          <nav aria-label="Console">
            <Stack gap={2}>
              {MAIN.map(link)}
              <Text size="xs" fw={600} c="dimmed" tt="uppercase" px={12} pt="md" pb={4}>
                Workspace
              </Text>
              {WORKSPACE.map(link)}
              {VIEW_NAV.map(link)}
              <Text size="xs" fw={600} c="dimmed" tt="uppercase" px={12} pt="md" pb={4}>
                Settings
              </Text>
              {settings.map(link)}
              <Divider my="sm" />
              <NavLink href="/api/v1/docs" target="_blank" label="API reference" leftSection={<IconApi size={18} stroke={1.6} />} style={{ borderRadius: 8 }} />
            </Stack>
          </nav>
        </AppShell.Section>
        <AppShell.Section pt="sm" style={{ borderTop: '1px solid var(--mantine-color-gray-2)' }}>
          <Menu position="top-start" width={240} withinPortal>
            <Menu.Target>
              <UnstyledButton style={{ width: '100%', padding: 8, borderRadius: 8 }}>
                <Group gap="sm" wrap="nowrap">
                  <Avatar color="indigo" radius="xl" size={32} aria-hidden>
                    {(session.user.name || session.user.email).slice(0, 1).toUpperCase()}
                  </Avatar>
                  <div style={{ flex: 1, minWidth: 0 }}>
                    <Text size="sm" fw={550} truncate>
                      {session.user.name || session.user.email}
                    </Text>
                    <Text size="xs" c="dimmed" truncate>
                      {session.user.email}
                    </Text>
                  </div>
                  <IconChevronDown size={16} aria-hidden />
                </Group>
              </UnstyledButton>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item leftSection={<IconUser size={16} />} component="a" href="/settings/profile" onClick={onLinkClick('/settings/profile')}>
                Profile
              </Menu.Item>
              <Menu.Item leftSection={<IconLogout size={16} />} onClick={() => void signOut()}>
                Sign out
              </Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <div className={editing ? 'fd-page-full' : 'fd-page'} id="main">
          {page}
        </div>
      </AppShell.Main>
    </AppShell>
  );
}
