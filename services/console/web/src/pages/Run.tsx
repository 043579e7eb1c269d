import { ActionIcon, Alert, Anchor, Badge, Button, Card, Code, CopyButton, Group, List, Loader, SimpleGrid, Stack, Text, Title, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconAlertTriangle, IconCheck, IconCopy, IconExternalLink, IconPlayerPlay, IconPlayerSkipForward, IconPlayerStop, IconX } from '@tabler/icons-react';
import { useCallback, useEffect, useState } from 'react';
import { nodeLabel } from '@flowdesk/contracts/nodes';
import { ErrorState, PageHeader } from '../components/States.tsx';
import { RunStatusBadge, darkText, duration, textOn } from '../components/RunStatus.tsx';
import { exact } from '../format.ts';
import { traceUrl, traceUrlTemplate } from '../pipeline.ts';
import { Link, navigate } from '../router.tsx';
import { AiTranscript } from '../runs/AiTranscript.tsx';
import { conversation } from '../runs/ai-transcript.ts';
import { groupSteps } from '../runs/step-groups.ts';
import { subscribeRuns, workspace, type RunStep, type WorkflowItem, type WorkflowRun } from '../workspace.ts';
import { triggerOf } from './Runs.tsx';
import { PinDeliveryButton } from '../workflows/sample.tsx';

function Json({ label, value }: { label: string; value: unknown }) {
  return (
    <div style={{ minWidth: 0 }}>
      <Text size="xs" fw={600} c="dimmed" tt="uppercase" mb={4}>
        {label}
      </Text>
      <Code block className="fd-json" tabIndex={0} aria-label={label}>
        {value === null || value === undefined ? '—' : JSON.stringify(value, null, 2)}
      </Code>
    </div>
  );
}

function StepCard({ step, index, warnings }: { step: RunStep; index: number; warnings: string[] }) {
  const skipped = step.status === 'skipped';
  // An AI step's conversation, readable (its raw output stays below).
  const ai = step.type === 'ai' ? conversation(step.output) : null;
  return (
    <Card
      withBorder
      radius="md"
      padding="md"
      component="li"
      aria-label={`Step ${index + 1}: ${step.nodeId}${step.item === undefined ? '' : ` (item ${step.item})`}`}
      data-node-id={step.nodeId}
      bg={skipped ? 'gray.0' : undefined}
    >
      <Group justify="space-between" wrap="wrap" gap="xs" mb={skipped ? 0 : 'sm'}>
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <Text size="sm" c="dimmed" aria-hidden>
            {index + 1}.
          </Text>
          <Title order={3} size="h5" style={{ overflowWrap: 'anywhere' }}>
            {step.nodeId}
          </Title>
          <Badge variant="outline" color="gray.7" size="sm" radius="sm">
            {nodeLabel(step.type)}
          </Badge>
          {step.item !== undefined && (
            <Badge variant="light" color="grape" c="grape.9" size="sm" radius="sm" tt="none">
              item {step.item}
            </Badge>
          )}
        </Group>
        <Group gap="sm">
          <RunStatusBadge status={step.status} />
          {(step.attempts ?? 1) > 1 && (
            <Badge variant="light" color="orange" size="sm" radius="sm" styles={darkText('orange')} data-testid="step-attempts">
              {step.attempts} attempts
            </Badge>
          )}
          <Text size="sm" c="dimmed">
            {step.disabled ? 'Disabled: its input passed on' : skipped ? 'Branch not taken' : duration(step.durationMs)}
          </Text>
        </Group>
      </Group>
      {step.attemptErrors && step.attemptErrors.length > 0 && (
        <Alert color="orange" variant="light" styles={{ title: { color: textOn('orange') } }} mb="sm" p="xs" title="Earlier attempts">
          <List size="sm" type="ordered">
            {step.attemptErrors.map((e, i) => (
              <List.Item key={i} style={{ overflowWrap: 'anywhere' }}>
                {e}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
      {warnings.length > 0 && (
        <Alert
          color="yellow"
          variant="light"
          styles={{ title: { color: textOn('yellow') } }}
          icon={<IconAlertTriangle size={16} />}
          mb="sm"
          p="xs"
          title="Warnings"
        >
          <List size="sm">
            {warnings.map((w) => (
              <List.Item key={w}>{w}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      {step.error && (
        <Alert color="red" variant="light" styles={{ title: { color: textOn('red') } }} mb="sm" p="xs" title="Error">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {step.error}
          </Text>
        </Alert>
      )}
      {ai && <AiTranscript view={ai} nodeId={step.nodeId} />}
      {skipped && step.disabled && (
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm" mt="sm">
          <Json label={`Passed on by ${step.nodeId}`} value={step.output} />
        </SimpleGrid>
      )}
      {!skipped && (
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
          <Json label={`Input of ${step.nodeId}`} value={step.input} />
          <Json label={`Output of ${step.nodeId}`} value={step.output} />
        </SimpleGrid>
      )}
    </Card>
  );
}

/**
 * The run's trace id (docs/observability.md): copyable, and a link to the trace when the console has
 * a TRACE_URL_TEMPLATE. Runs recorded while tracing was off have none.
 */
function TraceId({ traceId }: { traceId: string | null | undefined }) {
  if (!traceId)
    return (
      <Text size="sm" c="dimmed">
        Not recorded (tracing was off)
      </Text>
    );
  const link = traceUrl(traceUrlTemplate(), traceId);
  const id = (
    <Text span size="sm" ff="monospace" data-testid="trace-id" style={{ wordBreak: 'break-all' }}>
      {traceId}
    </Text>
  );
  return (
    <Group gap={4} wrap="nowrap" align="center">
      {link ? (
        <Anchor
          href={link}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="trace-link"
          style={{ display: 'inline-flex', alignItems: 'center', gap: 4, minWidth: 0 }}
        >
          {id}
          <IconExternalLink size={14} aria-hidden style={{ flexShrink: 0 }} />
          <span className="fd-sr-only">(opens the trace in a new tab)</span>
        </Anchor>
      ) : (
        id
      )}
      <CopyButton value={traceId}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy the trace id'} withArrow>
            <ActionIcon
              variant="subtle"
              color={copied ? 'teal' : 'gray'}
              size="sm"
              aria-label={copied ? 'Trace id copied' : 'Copy the trace id'}
              onClick={copy}
            >
              {copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

/** The step a waiting run is parked at (its `waiting` step), if any. */
const parkedStep = (run: WorkflowRun) => (run.wait ? run.steps.find((s) => s.nodeId === run.wait!.nodeId && s.status === 'waiting') : undefined);

/**
 * Whether the engine resumes this run now on request (POST /workflow-runs/:id/resume-now): a waiting
 * run parked on a timer — a Wait node's duration or date-time, or a retry's delay. Not a wait for a
 * resume (Approve / Reject are its way) nor a Run workflow step waiting for its child.
 */
export function canResumeNow(run: WorkflowRun): boolean {
  const step = parkedStep(run);
  return run.status === 'waiting' && !!run.wait && !run.wait.resumable && run.wait.until !== null && !!step && (step.type === 'wait' || !!step.retryAt);
}

/** One run: its trigger payload, each node's input, output, error and duration in order, warnings; run again. */
export function RunPage({ runId }: { runId: string }) {
  const [loaded, setRun] = useState<WorkflowRun | null>(null);
  // Another run opened (run again): its page waits for it rather than showing the previous one.
  const run = loaded?.id === runId ? loaded : null;
  const [workflow, setWorkflow] = useState<WorkflowItem | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    () =>
      workspace.getRun(runId).then(
        (r) => {
          setRun(r);
          setError(null);
        },
        (err: unknown) => setError((err as Error).message),
      ),
    [runId],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const workflowId = run?.workflowId;
  useEffect(() => {
    if (!workflowId) return;
    workspace.getWorkflow(workflowId).then(setWorkflow, () => setWorkflow(null));
  }, [workflowId]);

  // An unfinished run updates in place as the engine records it.
  const unfinished = run?.status === 'queued' || run?.status === 'running' || run?.status === 'waiting';
  useEffect(() => {
    if (!workflowId || !unfinished) return;
    return subscribeRuns(() => void load(), workflowId);
  }, [workflowId, unfinished, load]);

  const runAgain = async () => {
    if (!run) return;
    setBusy(true);
    try {
      const next = await workspace.rerun(run.id);
      notifications.show({ message: 'A new run started with the same payload.' });
      navigate(`/runs/${next.id}`);
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not run again', message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const cancel = async () => {
    if (!run) return;
    setBusy(true);
    try {
      setRun(await workspace.cancelRun(run.id));
      notifications.show({ message: 'Run cancelled: it stops before its next step.' });
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not cancel the run', message: (err as Error).message });
      void load();
    } finally {
      setBusy(false);
    }
  };

  // Approve / Reject a run waiting for a resume: the Wait node follows its resumed or rejected branch.
  const resume = async (action: 'approve' | 'reject') => {
    if (!run) return;
    setBusy(true);
    try {
      await workspace.resumeRun(run.id, action);
      notifications.show({ message: action === 'approve' ? 'Approved: the run continues.' : 'Rejected: the run continues on its rejected branch.' });
    } catch (err) {
      notifications.show({ color: 'red', title: `Could not ${action} the run`, message: (err as Error).message });
    } finally {
      setBusy(false);
      void load();
    }
  };

  // Resume now (testing a workflow): the timer fires now; the page follows the run as it goes on.
  const resumeNow = async () => {
    if (!run) return;
    setBusy(true);
    try {
      await workspace.resumeNow(run.id);
      notifications.show({ message: 'Resumed: the run goes on now.' });
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not resume the run', message: (err as Error).message });
    } finally {
      setBusy(false);
      void load();
    }
  };

  if (error) return <ErrorState title="This run could not be loaded" message={error} onRetry={() => void load()} />;
  if (!run) return <Loader aria-label="Loading the run" />;
  const warningsOf = (nodeId: string) => run.warnings.filter((w) => w.startsWith(`node "${nodeId}":`));
  const general = run.warnings.filter((w) => !run.steps.some((s) => w.startsWith(`node "${s.nodeId}":`)));

  return (
    <>
      <PageHeader
        title={`Run of ${workflow?.name ?? 'workflow'}`}
        description={
          <>
            <Anchor component={Link} to={`/workflows/${run.workflowId}/runs`} size="sm">
              All runs of this workflow
            </Anchor>
          </>
        }
        action={
          // A manual run runs whether the workflow is active or not (docs/triggers.md), so this is never disabled.
          <Group gap="sm">
            {run.status === 'waiting' && run.wait?.resumable && (
              <>
                <Button leftSection={<IconCheck size={16} />} onClick={() => void resume('approve')} loading={busy}>
                  Approve
                </Button>
                <Button color="red" variant="light" leftSection={<IconX size={16} />} onClick={() => void resume('reject')} loading={busy}>
                  Reject
                </Button>
              </>
            )}
            {canResumeNow(run) && (
              <Button leftSection={<IconPlayerSkipForward size={16} />} onClick={() => void resumeNow()} loading={busy}>
                Resume now
              </Button>
            )}
            {unfinished && (
              <Button color="red" variant="light" leftSection={<IconPlayerStop size={16} />} onClick={() => void cancel()} loading={busy}>
                Cancel run
              </Button>
            )}
            <Button leftSection={<IconPlayerPlay size={16} />} onClick={() => void runAgain()} loading={busy}>
              Run again with this payload
            </Button>
          </Group>
        }
      />
      <Card withBorder radius="md" padding="md" mb="md">
        <Group gap="xl" wrap="wrap">
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Status
            </Text>
            <RunStatusBadge status={run.status} />
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Started
            </Text>
            <Text size="sm">{exact(run.startedAt ?? run.createdAt)}</Text>
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Duration
            </Text>
            <Text size="sm">{duration(run.durationMs)}</Text>
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Trigger
            </Text>
            <Text size="sm">
              {triggerOf(run)}
              {run.rerunOf && (
                <>
                  {' of '}
                  <Anchor component={Link} to={`/runs/${run.rerunOf}`} size="sm">
                    an earlier run
                  </Anchor>
                </>
              )}
            </Text>
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Workflow version
            </Text>
            {run.workflowVersion ? (
              // The workflow's History opened at that version (docs/workflow-versions.md): read-only, compared with the current one.
              <Anchor component={Link} to={`/workflows/${run.workflowId}/history?version=${run.workflowVersion}`} size="sm">
                version {run.workflowVersion}
              </Anchor>
            ) : (
              <Text size="sm" c="dimmed" title="Runs recorded before versions were kept with runs do not know theirs">
                not recorded
              </Text>
            )}
          </Stack>
          <Stack gap={2} style={{ minWidth: 0 }}>
            <Text size="xs" c="dimmed">
              Trace
            </Text>
            <TraceId traceId={run.traceId} />
          </Stack>
        </Group>
      </Card>
      {run.status === 'waiting' && run.wait && <WaitingNotice run={run} />}
      {run.error && (
        <Alert color="red" variant="light" styles={{ title: { color: textOn('red') } }} title="The run failed" mb="md" role="alert">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {run.error}
          </Text>
        </Alert>
      )}
      {general.length > 0 && (
        <Alert color="yellow" variant="light" styles={{ title: { color: textOn('yellow') } }} title="Warnings" mb="md" icon={<IconAlertTriangle size={16} />}>
          <List size="sm">
            {general.map((w) => (
              <List.Item key={w}>{w}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      <Stack gap="md">
        <section aria-labelledby="payload-title">
          <Group justify="space-between" mb="xs" gap="xs" wrap="wrap">
            <Title order={2} size="h4" id="payload-title">
              Trigger payload
            </Title>
            <PinDeliveryButton run={run} />
          </Group>
          <Code block className="fd-json" tabIndex={0} aria-label="Trigger payload">
            {JSON.stringify(run.triggerPayload, null, 2)}
          </Code>
        </section>
        <section aria-labelledby="steps-title">
          <Title order={2} size="h4" id="steps-title" mb="xs">
            Steps
          </Title>
          {run.steps.length === 0 ? (
            <Text size="sm" c="dimmed">
              {unfinished ? 'The run has not recorded any step yet.' : 'No step ran.'}
            </Text>
          ) : (
            <Stack gap="sm" component="ol" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
              {groupSteps(run.steps).map((entry) =>
                entry.kind === 'step' ? (
                  <StepCard key={`${entry.step.nodeId}-${entry.index}`} step={entry.step} index={entry.index} warnings={warningsOf(entry.step.nodeId)} />
                ) : (
                  // A For each's body steps for one item (RunStep.item), labelled and indented under the loop.
                  <li key={`item-${entry.item}-${entry.steps[0]!.index}`} aria-label={`Item ${entry.item}`} data-item={entry.item} style={{ paddingLeft: 16 }}>
                    <Text size="xs" fw={650} c="dimmed" tt="uppercase" mb={4}>
                      Item {entry.item}
                    </Text>
                    <Stack gap="xs" component="ol" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                      {entry.steps.map(({ step, index }) => (
                        <StepCard key={`${step.nodeId}-${index}`} step={step} index={index} warnings={warningsOf(step.nodeId)} />
                      ))}
                    </Stack>
                  </li>
                ),
              )}
            </Stack>
          )}
        </section>
      </Stack>
    </>
  );
}

/** What a waiting run waits for: its wake time, or a resume (the link, Approve / Reject) and its timeout. */
function WaitingNotice({ run }: { run: WorkflowRun }) {
  const wait = run.wait!;
  const step = parkedStep(run);
  const link = (step?.output as { resumeUrl?: string } | null)?.resumeUrl;
  return (
    <Alert
      color="orange"
      variant="light"
      styles={{ title: { color: textOn('orange') } }}
      title={step?.retryAt ? `Waiting to retry "${wait.nodeId}"` : `Waiting at "${wait.nodeId}"`}
      mb="md"
      role="status"
    >
      <Stack gap={4}>
        {step?.retryAt && (
          <Text size="sm">
            Retrying at {exact(step.retryAt)} ({step.attempts ?? 1} {(step.attempts ?? 1) === 1 ? 'attempt' : 'attempts'} so far; last error: {step.error}).
          </Text>
        )}
        {!wait.resumable && wait.until && !step?.retryAt && <Text size="sm">Resumes at {exact(wait.until)}.</Text>}
        {wait.resumable && (
          <Text size="sm">Waits for Approve / Reject or a POST to its resume link{wait.until ? `; times out at ${exact(wait.until)}` : ''}.</Text>
        )}
        {link && (
          <Group gap="xs" wrap="nowrap">
            <Code style={{ overflowWrap: 'anywhere' }} aria-label="Resume link">
              {link}
            </Code>
            <CopyButton value={link}>
              {({ copied, copy }) => (
                <Tooltip label={copied ? 'Copied' : 'Copy the resume link'}>
                  <ActionIcon variant="subtle" onClick={copy} aria-label="Copy the resume link">
                    {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
                  </ActionIcon>
                </Tooltip>
              )}
            </CopyButton>
          </Group>
        )}
      </Stack>
    </Alert>
  );
}
