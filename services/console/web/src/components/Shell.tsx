import { AppShell, Avatar, Burger, Group, NavLink, ScrollArea, Stack, Text, UnstyledButton, Menu, Divider } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { IconApi, IconChevronDown, IconLogout, IconUser } from '@tabler/icons-react';
import { Fragment, useEffect } from 'react';
import { api, type SessionInfo } from '../api.ts';
import { onLinkClick } from '../router.tsx';
import { NotFoundPage } from '../pages/NotFound.tsx';
import { matchRoute, navEntries, type ConsoleRoute, type NavSection } from '../routes.tsx';
import { Logo } from './Logo.tsx';

const SECTION_TITLE: Record<NavSection, string | null> = { main: null, workspace: 'Workspace', settings: 'Settings' };

/** The signed-in console: the navigation, the document title and the page, all from the route table (routes.tsx). */
export function Shell({ session, path, onSignedOut }: { session: SessionInfo; path: string; onSignedOut: () => void }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const desktop = useMediaQuery('(min-width: 48em)', true);
  const isOwner = session.user.role === 'owner';
  const match = matchRoute(path, isOwner);
  const route = match?.route;
  // A route without a title (the editor) sets its own.
  const ownTitle = route !== undefined && route.title === undefined;
  const title = route?.title;
  const active = route?.highlight ?? route?.path;

  useEffect(() => {
    if (ownTitle) return close();
    document.title = title ? `${title} · Flowdesk` : 'Flowdesk';
    close();
  }, [title, ownTitle, path, close]);

  const signOut = async () => {
    try {
      await api.signOut();
    } catch {
      // the session may already be gone: signed out either way
    }
    notifications.show({ message: 'You are signed out.' });
    onSignedOut();
  };

  const link = (r: ConsoleRoute & Required<Pick<ConsoleRoute, 'nav'>>) => (
    <NavLink
      key={r.path}
      href={r.path}
      onClick={onLinkClick(r.path)}
      label={r.nav.label}
      leftSection={r.nav.icon}
      active={r.path === active}
      aria-current={r.path === path ? 'page' : undefined}
      variant="light"
      style={{ borderRadius: 8 }}
    />
  );

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
              {(Object.keys(SECTION_TITLE) as NavSection[]).map((section) => (
                <Fragment key={section}>
                  {SECTION_TITLE[section] && (
                    <Text size="xs" fw={600} c="dimmed" tt="uppercase" px={12} pt="md" pb={4}>
                      {SECTION_TITLE[section]}
                    </Text>
                  )}
                  {navEntries(section, isOwner).map(link)}
                </Fragment>
              ))}
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
        <div className={route?.layout === 'full' ? 'fd-page-full' : 'fd-page'} id="main">
          {match ? match.route.page({ session, onSignedOut, id: match.id }) : <NotFoundPage />}
        </div>
      </AppShell.Main>
    </AppShell>
  );
}
