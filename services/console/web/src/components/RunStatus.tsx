import { Badge } from '@mantine/core';
import type { CSSProperties } from 'react';
import type { RunStatus } from '../workspace.ts';

const COLORS: Record<RunStatus, string> = {
  queued: 'gray',
  running: 'blue',
  waiting: 'orange',
  succeeded: 'teal',
  failed: 'red',
  skipped: 'yellow',
  cancelled: 'gray',
};
const LABELS: Record<RunStatus | 'not_run', string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  skipped: 'Skipped',
  waiting: 'Waiting',
  cancelled: 'Cancelled',
  not_run: 'Not run',
};

export const runStatusLabel = (s: RunStatus | 'not_run') => LABELS[s];

/**
 * Badge text dark enough for WCAG AA (4.5:1) on the light variant's tint: Mantine's own light text
 * (and even shade 9 of yellow and orange) is too pale there.
 */
const DARK_TEXT: Record<string, string> = {
  teal: '#075c43',
  red: '#9b1c1c',
  blue: '#1a4a94',
  yellow: '#6b4100',
  orange: '#8a3309',
  gray: '#343a40',
  indigo: '#2f3a9e',
};
export const textOn = (color: string) => DARK_TEXT[color] ?? '#212529';
export const darkText = (color: string): { label: CSSProperties } => ({ label: { color: textOn(color) } });

/** A run's (or a step's) status as a badge; the colour only repeats what the text says. */
export function RunStatusBadge({ status }: { status: RunStatus }) {
  return (
    // Text two shades darker than Mantine's light variant: readable (WCAG AA) for every colour.
    <Badge color={COLORS[status]} variant="light" radius="sm" size="sm" styles={darkText(COLORS[status])}>
      {LABELS[status]}
    </Badge>
  );
}

/** "820 ms", "4.2 s", "3 min 5 s"; an unfinished run has none. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
