import { Group, Text } from '@mantine/core';

export function Logo() {
  return (
    <Group gap={8} wrap="nowrap">
      <svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true">
        <rect width="32" height="32" rx="8" fill="#4263eb" />
        <path d="M9 10h14M9 16h10M9 22h6" stroke="#fff" strokeWidth="3" strokeLinecap="round" />
      </svg>
      <Text fw={700} size="lg" style={{ letterSpacing: '-0.01em' }}>
        Flowdesk
      </Text>
    </Group>
  );
}
