import { Button, Group, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/** A form's closing row: Cancel (closes without saving) and its submit button, busy while it runs. */
export function FormActions({
  onCancel,
  busy,
  disabled,
  mt,
  children,
}: {
  onCancel: () => void;
  busy: boolean;
  disabled?: boolean;
  mt?: 'xs';
  /** The submit button's label, e.g. “Create task”. */
  children: ReactNode;
}) {
  return (
    <Group justify="flex-end" mt={mt}>
      <Button variant="default" onClick={onCancel}>
        Cancel
      </Button>
      <Button type="submit" loading={busy} disabled={disabled}>
        {children}
      </Button>
    </Group>
  );
}

/** Why a form was refused, announced to screen readers (role alert); nothing without an error. */
export function FormError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <Text c="red.8" size="sm" role="alert">
      {error}
    </Text>
  );
}
