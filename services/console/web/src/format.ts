const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const absolute = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/** "3 minutes ago", "yesterday"; "Never" for no date. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'Never';
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
    ['year', Infinity],
  ];
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return Math.abs(seconds) < 10 ? 'Just now' : relative.format(Math.round(value), unit);
    value /= size;
  }
  return absolute.format(new Date(iso));
}

export const exact = (iso: string | null | undefined): string => (iso ? absolute.format(new Date(iso)) : '');

/** Read / Read + Write from the granted scopes. */
export const accessOf = (scope: string): string => (scope.split(/\s+/).includes('mcp:write') ? 'Read + Write' : 'Read');
