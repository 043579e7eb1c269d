import { Alert, Button, Group, Text } from '@mantine/core';
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

/**
 * Why a form was refused, announced to screen readers (role alert); nothing without an error.
 * `boxed`: in a red box, as the forms of modals and sign-in pages show it above their fields.
 */
export function FormError({ error, boxed }: { error: string | null | undefined; boxed?: boolean }) {
  if (!error) return null;
  if (boxed)
    return (
      <Alert color="red" variant="light" role="alert">
        {error}
      </Alert>
    );
  return (
    <Text c="red.8" size="sm" role="alert">
      {error}
    </Text>
  );
}
