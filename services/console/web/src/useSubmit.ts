import { useState } from 'react';
import { ApiError } from './api.ts';

/** A form's busy flag and its last error message, around one async submit. */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        setError(`${err.message}${err.retryAfterSeconds ? ` Try again in ${err.retryAfterSeconds} s.` : ''}`);
      } else {
        setError(err instanceof Error ? err.message : String(err));
      }
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
