import { useCallback, useEffect, useState } from 'react';

/** A list loaded from the API, with reload. */
export function useList<T>(load: () => Promise<T[]>) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setItems(await load());
      setError(null);
    } catch (err) {
      setError((err as Error).message);
    }
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { items, error, reload };
}
