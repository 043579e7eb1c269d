import { Alert, Button, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import type { ReactNode } from 'react';

export function EmptyState({ icon, title, children, action }: { icon: ReactNode; title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Stack align="center" gap="xs" py={48} px="md" ta="center">
      <ThemeIcon size={52} radius="xl" variant="light" aria-hidden>
        {icon}
      </ThemeIcon>
      <Title order={3} size="h4" mt="xs">
        {title}
      </Title>
      <Text c="dimmed" size="sm" maw={420}>
        {children}
      </Text>
      {action && <div style={{ marginTop: 8 }}>{action}</div>}
    </Stack>
  );
}

export function ErrorState({ title, message, onRetry }: { title: string; message: string; onRetry?: () => void }) {
  return (
    <Alert color="red" variant="light" title={title} icon={<IconAlertTriangle size={18} />} role="alert" maw={520}>
      <Text size="sm">{message}</Text>
      {onRetry && (
        <Button mt="sm" size="xs" variant="white" color="red" onClick={onRetry}>
          Try again
        </Button>
      )}
    </Alert>
  );
}

export function PageHeader({ title, description, action }: { title: string; description?: ReactNode; action?: ReactNode }) {
  return (
    <Stack gap={4} mb="lg">
      <div style={{ display: 'flex', gap: 16, alignItems: 'flex-start', justifyContent: 'space-between', flexWrap: 'wrap' }}>
        <Title order={1} size="h2">
          {title}
        </Title>
        {action}
      </div>
      {description && (
        <Text c="dimmed" size="sm" maw={640}>
          {description}
        </Text>
      )}
    </Stack>
  );
}
