/**
 * Run this step (docs/console.md): the node panel's button that runs the selected node once, as it
 * is in the editor (saved or not), against the sample (the workflow's pinned sample, or its last
 * delivery) and the known outputs of the nodes before it (dry run, last run), and shows its input and output or
 * error. Nothing is activated, saved or recorded. A node that may change the world (sends a
 * request other than GET, creates something) asks first: it acts for real, as in n8n.
 */
import { Alert, Button, Code, Group, Modal, Stack, Text } from '@mantine/core';
import { IconPlayerPlay } from '@tabler/icons-react';
import { useState } from 'react';
import { api, ApiError, type StepTestResult } from '../api.ts';
import { RunStatusBadge } from '../components/RunStatus.tsx';
import { definitionOf, toParams, type ApiNode, type StepData } from './graph.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether running this step may change something outside Flowdesk's run (and so needs a confirmation), with what. */
export function sideEffectOf(data: StepData, params: Record<string, unknown>): string | null {
  // The registry says which node types only compute (the engine's isAction is the same flag).
  if (!definitionOf(data.kind).action) return null;
  if (data.kind === 'http_request') {
    const method = typeof params.method === 'string' ? params.method : 'POST';
    return SAFE_METHODS.has(method) ? null : `It sends the ${method} request for real.`;
  }
  if (data.kind === 'create_task') return 'It creates the task in your workspace for real.';
  return `${definitionOf(data.kind).label} runs for real: whatever it changes is changed.`;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) ?? 'null';

/** Render it with `key={nodeId}`: another node selected starts without this one's result. */
export function RunStep({
  workflowId,
  nodeId,
  data,
  sample,
  outputs,
  loop,
  onOutput,
}: {
  workflowId: string;
  nodeId: string;
  data: StepData;
  /** {{trigger.…}}: the pinned sample or the last delivery, or null when there is none. */
  sample: Record<string, unknown> | null;
  /** {{nodes.<id>.…}}: the last run's outputs. */
  outputs: Record<string, unknown>;
  /** Inside a For each body: the item and index the step is tried with (the picker's first item). */
  loop?: { item: unknown; index: number };
  /** Told the step's output when it succeeded (the variable picker then lists its fields). */
  onOutput?: (output: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<StepTestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  const { params, problem } = toParams(data);
  const effect = sideEffectOf(data, params);
  const payload = sample ?? {};

  const run = async () => {
    setConfirming(null);
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const node = { id: nodeId, type: data.kind, params } as ApiNode;
      const tested = await api.testStep(workflowId, { node, payload, nodes: outputs, ...(loop ? { item: loop.item, index: loop.index } : {}) });
      setResult(tested);
      if (tested.step.status === 'succeeded' && tested.step.output != null) onOutput?.(tested.step.output);
    } catch (err) {
      setError(err instanceof ApiError || err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const start = () => (effect ? setConfirming(effect) : void run());

  return (
    <section aria-label="Run this step" data-testid="run-step">
      <Stack gap="xs">
        <Group gap="xs" justify="space-between" wrap="wrap">
          <Button variant="default" size="xs" leftSection={<IconPlayerPlay size={14} />} onClick={start} loading={busy} disabled={!!problem}>
            Run this step
          </Button>
          <Text size="xs" c="dimmed" style={{ flex: '1 1 12rem' }}>
            {sample ? 'On the sample and the known outputs of earlier steps; nothing is saved or recorded.' : 'No sample yet: runs on an empty payload.'}
            {effect ? ' Acts for real.' : ''}
          </Text>
        </Group>
        {problem && (
          <Text size="xs" c="red.8">
            {problem}
          </Text>
        )}
        {error && (
          <Alert color="red" variant="light" role="alert" p="xs" title="Could not run the step">
            {error}
          </Alert>
        )}
        {result && <StepResult result={result} />}
      </Stack>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={confirming !== null}
        onClose={() => setConfirming(null)}
        title={<Text fw={650}>Run this step for real?</Text>}
        centered
        radius="lg"
      >
        <Text size="sm">{confirming}</Text>
        <Text size="sm" c="dimmed" mt="xs">
          The workflow stays as it is (not activated, not saved) and no run is recorded.
        </Text>
        <Group justify="flex-end" mt="lg">
          <Button variant="default" onClick={() => setConfirming(null)}>
            Cancel
          </Button>
          <Button onClick={() => void run()}>Run it</Button>
        </Group>
      </Modal>
    </section>
  );
}

function StepResult({ result }: { result: StepTestResult }) {
  const { step } = result;
  return (
    <Stack gap={6} data-testid="run-step-result" aria-live="polite">
      <Group gap={6}>
        <RunStatusBadge status={step.status} />
        {result.branch && (
          <Text size="xs">
            Branch: <b>{result.branch}</b>
          </Text>
        )}
        <Text size="xs" c="dimmed">
          {step.durationMs} ms
        </Text>
      </Group>
      {step.error && (
        <Alert color="red" variant="light" p="xs" data-testid="run-step-error">
          {step.error}
        </Alert>
      )}
      {result.warnings.map((w) => (
        <Text key={w} size="xs" c="dark.6">
          Warning: {w}
        </Text>
      ))}
      <Text size="xs" fw={600}>
        Input
      </Text>
      <Code block data-testid="run-step-input" style={{ maxHeight: 200, overflow: 'auto' }}>
        {json(step.input)}
      </Code>
      <Text size="xs" fw={600}>
        Output
      </Text>
      <Code block data-testid="run-step-output" style={{ maxHeight: 240, overflow: 'auto' }}>
        {json(step.output)}
      </Code>
    </Stack>
  );
}
