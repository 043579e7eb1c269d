import { Button, Group, Modal, Text } from '@mantine/core';
import { useState, type ReactNode } from 'react';

/** A confirmation for something that cannot be undone. */
export function ConfirmDialog({
  opened,
  title,
  children,
  confirmLabel,
  onConfirm,
  onClose,
}: {
  opened: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await onConfirm();
      onClose();
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title={<Text fw={650}>{title}</Text>} centered radius="lg">
      <Text size="sm" c="dimmed">
        {children}
      </Text>
      <Group justify="flex-end" mt="lg">
        <Button variant="default" onClick={onClose} disabled={busy}>
          Cancel
        </Button>
        <Button color="red.8" onClick={() => void confirm()} loading={busy}>
          {confirmLabel}
        </Button>
      </Group>
    </Modal>
  );
}
