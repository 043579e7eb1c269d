/**
 * The runs panel and the workspace views (docs/console.md, "Runs" and "Workspace"): their nav entries
 * and the pages their paths open, kept here so the shell only lists and asks.
 */
import { IconCalendar, IconChecklist, IconFolder, IconNotes, IconPlayerPlay } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { CalendarPage } from '../pages/Calendar.tsx';
import { NotesPage } from '../pages/Notes.tsx';
import { ProjectsPage } from '../pages/Projects.tsx';
import { RunPage } from '../pages/Run.tsx';
import { RunsPage } from '../pages/Runs.tsx';
import { TasksPage } from '../pages/Tasks.tsx';

export interface ViewNav {
  path: string;
  label: string;
  icon: ReactNode;
  title: string;
}

export const VIEW_NAV: ViewNav[] = [
  { path: '/runs', label: 'Runs', icon: <IconPlayerPlay size={18} stroke={1.6} />, title: 'Runs' },
  { path: '/projects', label: 'Projects', icon: <IconFolder size={18} stroke={1.6} />, title: 'Projects' },
  { path: '/tasks', label: 'Tasks', icon: <IconChecklist size={18} stroke={1.6} />, title: 'Tasks' },
  { path: '/calendar', label: 'Calendar', icon: <IconCalendar size={18} stroke={1.6} />, title: 'Calendar' },
  { path: '/notes', label: 'Notes', icon: <IconNotes size={18} stroke={1.6} />, title: 'Notes' },
];

const UUID = '[0-9a-fA-F-]{36}';

/** The page a path opens (with its title and the nav entry it belongs to), or null for none of these. */
export function viewFor(path: string): { title: string; nav: string; page: ReactNode } | null {
  const nav = VIEW_NAV.find((v) => v.path === path);
  if (nav) {
    const pages: Record<string, ReactNode> = {
      '/runs': <RunsPage />,
      '/projects': <ProjectsPage />,
      '/tasks': <TasksPage />,
      '/calendar': <CalendarPage />,
      '/notes': <NotesPage />,
    };
    return { title: nav.title, nav: nav.path, page: pages[nav.path] };
  }
  let m = new RegExp(`^/workflows/(${UUID})/runs$`).exec(path);
  if (m) return { title: 'Runs', nav: '/runs', page: <RunsPage key={m[1]} workflowId={m[1]} /> };
  m = new RegExp(`^/runs/(${UUID})$`).exec(path);
  if (m) return { title: 'Run', nav: '/runs', page: <RunPage key={m[1]} runId={m[1]!} /> };
  return null;
}
