import { Checkbox, Fieldset, Group, MultiSelect, NumberInput, Select, Stack, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { RETRY_DEFAULTS, RETRY_LIMITS, RETRY_ON, type OnError, type RetryPolicy } from '@flowdesk/contracts/nodes';
import { workspace, type WorkflowItem } from '../workspace.ts';
import { RETRY_ON_LABELS, retrySummary, savedRetry } from './graph.ts';

/** The labels of a node's "on error" (libs/contracts nodes/define.ts ON_ERROR; docs/workflow-engine.md, "Error paths"). */
const ON_ERROR_OPTIONS: { value: OnError; label: string }[] = [
  { value: 'fail', label: 'Fail the run' },
  { value: 'continue', label: 'Continue with the error as output' },
  { value: 'branch', label: 'Follow the error branch' },
];

/** A step's "on error": fail the run (default), continue with {error} as its output, or follow its error handle. */
export function OnErrorSelect({ value, onChange }: { value: OnError | undefined; onChange: (v: OnError) => void }) {
  return (
    <Select
      label="On error"
      description={
        value === 'branch'
          ? 'Connect the step’s error handle (below it) to the steps to run when it fails.'
          : value === 'continue'
            ? 'Later steps read the error as {{nodes.<id>.error}}.'
            : 'The run fails at this step (its error workflow, if set, starts).'
      }
      data={ON_ERROR_OPTIONS}
      value={value ?? 'fail'}
      allowDeselect={false}
      onChange={(v) => v && onChange(v)}
    />
  );
}

/** The workflow's error workflow: another of the user's workflows, started when a run of this one fails. */
export function ErrorWorkflowSelect({ workflowId, value, onChange }: { workflowId: string; value: string | null; onChange: (v: string | null) => void }) {
  const [workflows, setWorkflows] = useState<WorkflowItem[] | null>(null);
  useEffect(() => {
    workspace.listWorkflows().then(setWorkflows, () => setWorkflows([]));
  }, []);
  const data = (workflows ?? [])
    .filter((w) => w.id !== workflowId)
    .map((w) => ({ value: w.id, label: w.triggerType === 'error' ? w.name : `${w.name} (${w.triggerType} trigger)` }));
  return (
    <Select
      label="Error workflow"
      description="Started with {workflow, run, failedNode, error} when a run of this workflow fails. Give it the Error trigger."
      placeholder={workflows ? 'None' : 'Loading…'}
      data={data}
      value={value}
      clearable
      searchable
      onChange={(v) => onChange(v ?? null)}
    />
  );
}

/**
 * A step's retry policy (libs/contracts RetryPolicySchema; docs/workflow-engine.md, "Retries"), beside
 * its "on error": generic for every node type. One attempt (the default) saves no policy. Folded (a
 * disclosure whose summary says the policy) unless the step has one: it kept the panel long for
 * every step. Render it with `key={nodeId}`: another node opens or folds it by its own policy.
 */
export function RetrySettings({ value, onChange }: { value: RetryPolicy | undefined; onChange: (v: RetryPolicy | undefined) => void }) {
  const attempts = value?.attempts ?? 1;
  const set = (patch: Partial<RetryPolicy>) => onChange({ ...value, attempts, ...patch });
  const [open, setOpen] = useState(() => savedRetry(value) !== undefined);
  return (
    <details className="fd-disclosure" open={open} onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="retry-settings">
      <summary>
        <Text span size="sm" fw={500}>
          Retry
        </Text>{' '}
        <Text span size="xs" c="dimmed" data-testid="retry-summary">
          {retrySummary(value)}
        </Text>
      </summary>
      <Fieldset variant="unstyled" aria-label="Retry" p={0}>
        <Stack gap="xs" mt="xs">
          <Text size="xs" c="dimmed">
            A POST or PATCH is retried only when it sends its Idempotency-Key.
          </Text>
          <NumberInput
            label="Attempts"
            description="In all, the first one included (1: no retry)"
            min={1}
            max={RETRY_LIMITS.maxAttempts}
            clampBehavior="strict"
            allowDecimal={false}
            value={attempts}
            onChange={(v) => {
              const n = typeof v === 'number' ? v : Number.parseInt(v, 10);
              if (!Number.isFinite(n) || n <= 1) return onChange(undefined);
              set({ attempts: Math.min(n, RETRY_LIMITS.maxAttempts) });
            }}
          />
          {attempts > 1 && (
            <>
              <Group grow align="flex-start">
                <Select
                  label="Backoff"
                  data={[
                    { value: 'exponential', label: 'Exponential' },
                    { value: 'fixed', label: 'Fixed' },
                  ]}
                  value={value?.backoff ?? RETRY_DEFAULTS.backoff}
                  allowDeselect={false}
                  onChange={(v) => v && set({ backoff: v })}
                />
                <NumberInput
                  label="Delay (ms)"
                  min={0}
                  max={RETRY_LIMITS.maxDelayMs}
                  allowDecimal={false}
                  value={value?.delayMs ?? RETRY_DEFAULTS.delayMs}
                  onChange={(v) => typeof v === 'number' && set({ delayMs: v })}
                />
              </Group>
              <Group grow align="flex-start">
                <NumberInput
                  label="Max delay (ms)"
                  description="Retry-After included"
                  min={0}
                  max={RETRY_LIMITS.maxDelayMs}
                  allowDecimal={false}
                  value={value?.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs}
                  onChange={(v) => typeof v === 'number' && set({ maxDelayMs: v })}
                />
                <Checkbox
                  mt="xl"
                  label="Jitter"
                  disabled={(value?.backoff ?? RETRY_DEFAULTS.backoff) === 'fixed'}
                  checked={value?.jitter ?? RETRY_DEFAULTS.jitter}
                  onChange={(e) => set({ jitter: e.currentTarget.checked })}
                />
              </Group>
              <MultiSelect
                label="Retry on"
                data={RETRY_ON.map((k) => ({ value: k, label: RETRY_ON_LABELS[k] }))}
                value={[...(value?.on ?? RETRY_DEFAULTS.on)]}
                onChange={(v) => v.length > 0 && set({ on: v })}
              />
            </>
          )}
        </Stack>
      </Fieldset>
    </details>
  );
}
