/**
 * Every page of the console, in one table (docs/development.md, "A console page"): its path, where it
 * sits in the navigation (section, label, icon), its document title, whether only the owner sees it,
 * and the page it opens. The shell renders the navigation, the title and the owner guard from it, and
 * the app picks the page with `matchRoute`; nothing else lists pages. Top-level paths must also be in
 * the server's `PAGES` (src/routes/web.ts), so a reload answers the app: routes.test.ts checks both.
 */
import {
  IconApps,
  IconCalendar,
  IconChecklist,
  IconFolder,
  IconHome,
  IconKey,
  IconLock,
  IconNotes,
  IconPlayerPlay,
  IconSitemap,
  IconUser,
  IconUsers,
} from '@tabler/icons-react';
import type { ReactNode } from 'react';
import type { SessionInfo, SetupState } from './api.ts';
import { ApiKeysPage } from './pages/ApiKeys.tsx';
import { CalendarPage } from './pages/Calendar.tsx';
import { ConnectedAppsPage } from './pages/ConnectedApps.tsx';
import { CredentialsPage } from './pages/Credentials.tsx';
import { MembersPage } from './pages/Members.tsx';
import { NotesPage } from './pages/Notes.tsx';
import { OverviewPage } from './pages/Overview.tsx';
import { ProfilePage } from './pages/Profile.tsx';
import { ProjectsPage } from './pages/Projects.tsx';
import { RunPage } from './pages/Run.tsx';
import { RunsPage } from './pages/Runs.tsx';
import { SetupPage } from './pages/Setup.tsx';
import { SignInPage } from './pages/SignIn.tsx';
import { SignUpPage } from './pages/SignUp.tsx';
import { TasksPage } from './pages/Tasks.tsx';
import { WorkflowEditorPage } from './pages/WorkflowEditor.tsx';
import { WorkflowHistoryPage } from './pages/WorkflowHistory.tsx';
import { WorkflowsPage } from './pages/Workflows.tsx';

/** What a signed-in page may need: the session, the sign-out callback, and the path's `:id` (decoded). */
export interface PageContext {
  session: SessionInfo;
  onSignedOut: () => void;
  id: string;
}
/** What a page before sign-in needs: the installation's setup state and the callback once signed in. */
export interface PublicContext {
  setup: SetupState;
  onDone: (session: SessionInfo) => void;
}

export type NavSection = 'main' | 'workspace' | 'settings';

export interface ConsoleRoute {
  /** `/settings/profile`; `:id` stands for one path segment, `:uuid` for a UUID (anything else there is "Page not found"). */
  path: string;
  /** Its entry in the navigation; without one, `highlight` names the entry that is marked active. */
  nav?: { section: NavSection; label: string; icon: ReactNode };
  highlight?: string;
  /** The document title (`<title> · Flowdesk`); absent, the page sets its own (the editor: the workflow's name). */
  title?: string;
  /** Left out of the navigation for members, and "Page not found" for them (the API refuses them on its own). */
  ownerOnly?: boolean;
  /** `full`: the page fills the main area (the editor's canvas). */
  layout?: 'page' | 'full';
  page: (ctx: PageContext) => ReactNode;
}

export interface PublicRoute {
  path: string;
  page: (ctx: PublicContext) => ReactNode;
}

const icon = (Icon: typeof IconHome) => <Icon size={18} stroke={1.6} />;

/** The signed-in console, in navigation order. */
export const ROUTES: readonly ConsoleRoute[] = [
  {
    path: '/',
    nav: { section: 'main', label: 'Overview', icon: icon(IconHome) },
    title: 'Overview',
    page: ({ session }) => <OverviewPage session={session} />,
  },
  { path: '/workflows', nav: { section: 'workspace', label: 'Workflows', icon: icon(IconSitemap) }, title: 'Workflows', page: () => <WorkflowsPage /> },
  { path: '/runs', nav: { section: 'workspace', label: 'Runs', icon: icon(IconPlayerPlay) }, title: 'Runs', page: () => <RunsPage /> },
  { path: '/projects', nav: { section: 'workspace', label: 'Projects', icon: icon(IconFolder) }, title: 'Projects', page: () => <ProjectsPage /> },
  { path: '/tasks', nav: { section: 'workspace', label: 'Tasks', icon: icon(IconChecklist) }, title: 'Tasks', page: () => <TasksPage /> },
  { path: '/calendar', nav: { section: 'workspace', label: 'Calendar', icon: icon(IconCalendar) }, title: 'Calendar', page: () => <CalendarPage /> },
  { path: '/notes', nav: { section: 'workspace', label: 'Notes', icon: icon(IconNotes) }, title: 'Notes', page: () => <NotesPage /> },
  {
    path: '/settings/profile',
    nav: { section: 'settings', label: 'Profile', icon: icon(IconUser) },
    title: 'Profile',
    page: ({ session, onSignedOut }) => <ProfilePage session={session} onSignedOut={onSignedOut} />,
  },
  { path: '/settings/api-keys', nav: { section: 'settings', label: 'API keys', icon: icon(IconKey) }, title: 'API keys', page: () => <ApiKeysPage /> },
  {
    path: '/settings/credentials',
    nav: { section: 'settings', label: 'Credentials', icon: icon(IconLock) },
    title: 'Credentials',
    page: () => <CredentialsPage />,
  },
  {
    path: '/settings/connected-apps',
    nav: { section: 'settings', label: 'Connected Apps', icon: icon(IconApps) },
    title: 'Connected Apps',
    page: () => <ConnectedAppsPage />,
  },
  {
    path: '/settings/members',
    nav: { section: 'settings', label: 'Members', icon: icon(IconUsers) },
    title: 'Members',
    ownerOnly: true,
    page: ({ session }) => <MembersPage session={session} />,
  },
  { path: '/workflows/:uuid/runs', highlight: '/runs', title: 'Runs', page: ({ id }) => <RunsPage key={id} workflowId={id} /> },
  { path: '/workflows/:uuid/history', highlight: '/workflows', page: ({ id }) => <WorkflowHistoryPage key={id} id={id} /> },
  { path: '/workflows/:id', highlight: '/workflows', layout: 'full', page: ({ id }) => <WorkflowEditorPage key={id} id={id} /> },
  { path: '/runs/:uuid', highlight: '/runs', title: 'Run', page: ({ id }) => <RunPage key={id} runId={id} /> },
];

/** Before sign-in. Without a session any other path leads to sign-in (or to setup while no owner exists). */
export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  { path: '/setup', page: ({ setup, onDone }) => <SetupPage demoAccount={setup.demoAccount} onDone={onDone} /> },
  { path: '/sign-in', page: ({ setup, onDone }) => <SignInPage signup={setup.signup} demoAccount={setup.demoAccount} onDone={onDone} /> },
  { path: '/sign-up', page: ({ setup, onDone }) => <SignUpPage signup={setup.signup} onDone={onDone} /> },
];
export const PUBLIC_PATHS: readonly string[] = PUBLIC_ROUTES.map((r) => r.path);

const SEGMENT: Record<string, string> = { ':id': '([^/]+)', ':uuid': '([0-9a-fA-F-]{36})' };
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const patterns = new Map(
  ROUTES.map(
    (r) =>
      [
        r,
        new RegExp(
          `^${r.path
            .split('/')
            .map((s) => SEGMENT[s] ?? escape(s))
            .join('/')}$`,
        ),
      ] as const,
  ),
);

/** The route a path opens and its `:id` (decoded; '' without one), or null: "Page not found". */
export function matchRoute(path: string, isOwner: boolean): { route: ConsoleRoute; id: string } | null {
  for (const [route, pattern] of patterns) {
    const m = pattern.exec(path);
    if (!m) continue;
    if (route.ownerOnly && !isOwner) return null;
    let id = m[1] ?? '';
    try {
      id = decodeURIComponent(id);
    } catch {
      return null;
    }
    return { route, id };
  }
  return null;
}

/** The navigation's entries of one section, as this user sees them. */
export const navEntries = (section: NavSection, isOwner: boolean) =>
  ROUTES.filter((r): r is ConsoleRoute & Required<Pick<ConsoleRoute, 'nav'>> => r.nav?.section === section && (!r.ownerOnly || isOwner));
