import { Button } from '@mantine/core';
import { IconMapPinOff } from '@tabler/icons-react';
import { EmptyState } from '../components/States.tsx';
import { Link } from '../router.tsx';

export function NotFoundPage() {
  return (
    <EmptyState
      icon={<IconMapPinOff size={26} />}
      title="Page not found"
      action={
        <Button component={Link} to="/">
          Back to overview
        </Button>
      }
    >
      There is nothing at this address.
    </EmptyState>
  );
}
