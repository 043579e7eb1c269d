/** A Postgres DATE comes back as midnight UTC; the API speaks YYYY-MM-DD. */
export const toDateOnly = (d: Date | null): string | null => (d ? d.toISOString().slice(0, 10) : null);
export const fromDateOnly = (s: string | null | undefined): Date | null | undefined =>
  s === undefined ? undefined : s === null ? null : new Date(`${s}T00:00:00.000Z`);
export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
/** "Today" in UTC as a DATE value. */
export const startOfUtcDay = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
export const addDays = (d: Date, days: number): Date => new Date(d.getTime() + days * 86_400_000);
