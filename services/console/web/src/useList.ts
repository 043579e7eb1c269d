import { useCallback, useEffect, useState } from 'react';

/** A list loaded from the API, with reload. */
export function useList<T>(load: () => Promise<T[]>) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // State is set when the answer comes (in the promise's callbacks), never synchronously in the effect.
  const reload = useCallback(
    () =>
      load().then(
        (next) => {
          setItems(next);
          setError(null);
        },
        (err: unknown) => setError((err as Error).message),
      ),
    [load],
  );
  useEffect(() => {
    void reload();
  }, [reload]);
  return { items, error, reload };
}
