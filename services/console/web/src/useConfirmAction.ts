import { notifications } from '@mantine/notifications';
import { useState } from 'react';

/**
 * A change made from a list: run it, say how it went in a toast (green with `done`; red titled
 * `failed`, with the server's message), then reload the list either way (what the server now has).
 */
export async function actAndReload(work: () => Promise<unknown>, done: string, failed: string, reload: () => Promise<unknown>): Promise<void> {
  try {
    await work();
    notifications.show({ color: 'green', message: done });
  } catch (err) {
    notifications.show({ color: 'red', title: failed, message: (err as Error).message });
  }
  await reload();
}

/**
 * confirm → toast → reload, for something that cannot be undone (delete, revoke, disable): `ask(item)`
 * opens the ConfirmDialog (spread `dialog` on it), confirming runs `run(item)` as actAndReload does.
 */
export function useConfirmAction<T>(action: { run: (item: T) => Promise<unknown>; done: (item: T) => string; failed: string; reload: () => Promise<unknown> }) {
  const [target, setTarget] = useState<T | null>(null);
  return {
    /** The item asked about, while the dialog is open. */
    target,
    ask: (item: T) => setTarget(item),
    dialog: {
      opened: target !== null,
      onClose: () => setTarget(null),
      onConfirm: async () => {
        if (target !== null) await actAndReload(() => action.run(target), action.done(target), action.failed, action.reload);
      },
    },
  };
}
