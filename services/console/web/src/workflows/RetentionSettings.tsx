import { Group, NumberInput, Stack, Text } from '@mantine/core';
import type { WorkflowRetention } from '@flowdesk/contracts';

/**
 * The workflow's own run history retention (docs/operations.md, "Run history retention"): keep its
 * finished runs N days and/or its N newest finished runs. An empty field follows the server's global
 * setting; both empty: null.
 */
export function RetentionSettings({ value, onChange }: { value: WorkflowRetention | null; onChange: (v: WorkflowRetention | null) => void }) {
  const set = (field: 'days' | 'runs', raw: string | number) => {
    const n = typeof raw === 'number' ? raw : raw === '' ? undefined : Number(raw);
    const next: WorkflowRetention = { ...(value ?? {}) };
    if (n === undefined || !Number.isInteger(n) || n < 1) delete next[field];
    else next[field] = n;
    onChange(next.days === undefined && next.runs === undefined ? null : next);
  };
  return (
    <Stack gap={4} data-testid="retention-settings">
      <Text size="sm" fw={500}>
        Run history
      </Text>
      <Group grow align="flex-start">
        <NumberInput
          label="Keep days"
          placeholder="Global"
          min={1}
          max={3650}
          allowDecimal={false}
          value={value?.days ?? ''}
          onChange={(v) => set('days', v)}
        />
        <NumberInput
          label="Keep newest runs"
          placeholder="Global"
          min={1}
          max={1_000_000}
          allowDecimal={false}
          value={value?.runs ?? ''}
          onChange={(v) => set('runs', v)}
        />
      </Group>
      <Text size="xs" c="dimmed">
        Finished runs of this workflow older than this, or beyond this many, are deleted. Empty: the server’s setting (30 days by default).
      </Text>
    </Stack>
  );
}
