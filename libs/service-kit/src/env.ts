/** A configuration variable a service cannot start without: a clear error naming it, at start. */
export function requiredEnv(env: Record<string, string | undefined>, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}
