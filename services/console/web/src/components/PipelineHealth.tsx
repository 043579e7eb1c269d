import { Anchor, Badge, Group, List, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { age, pipelineVerdict } from '../pipeline.ts';
import { Link } from '../router.tsx';
import { HEALTH_RUN_STATUSES, type RunsHealth, type WorkflowItem } from '../workspace.ts';
import { darkText, runStatusLabel } from './RunStatus.tsx';

const STATUS_COLOR = { queued: 'gray', running: 'blue', succeeded: 'teal', failed: 'red', skipped: 'yellow' } as const;

function Figure({ label, value, detail }: { label: string; value: ReactNode; detail?: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" component="dt">
        {label}
      </Text>
      <Text size="sm" fw={600} component="dd" m={0}>
        {value}
        {detail && (
          <Text span size="xs" c="dimmed" fw={400}>
            {' '}
            {detail}
          </Text>
        )}
      </Text>
    </div>
  );
}

/**
 * The run pipeline's health for the signed-in user's workflows (GET /api/v1/workflow-runs/health,
 * docs/observability.md): a verdict with its reasons, the last hour by status, the backlog,
 * dead-lettered events and the workflows that failed. Ages are measured on the server's clock (its
 * checkedAt), so a browser with a wrong clock does not misjudge them.
 */
export function PipelineHealth({
  health,
  workflows,
  now = Date.parse(health.checkedAt),
}: {
  health: RunsHealth;
  workflows: Map<string, WorkflowItem>;
  now?: number;
}) {
  const verdict = pipelineVerdict(health, now);
  const { backlog, deadLettered } = health;
  const nameOf = (id: string) => workflows.get(id)?.name ?? 'Workflow';
  return (
    <Stack gap="sm" data-testid="pipeline-health">
      <Group gap="xs" wrap="nowrap" align="flex-start">
        <ThemeIcon variant="light" color={verdict.healthy ? 'teal' : 'red'} radius="xl" size="md" aria-hidden>
          {verdict.healthy ? <IconCircleCheck size={16} /> : <IconAlertTriangle size={16} />}
        </ThemeIcon>
        <div>
          <Text size="sm" fw={650} c={verdict.healthy ? 'teal.9' : 'red.8'} data-testid="pipeline-verdict">
            {verdict.healthy ? 'Healthy: runs keep up and none failed in the last hour' : 'Needs attention'}
          </Text>
          {!verdict.healthy && (
            <List size="sm" spacing={2} c="red.8">
              {verdict.reasons.map((r) => (
                <List.Item key={r}>{r}</List.Item>
              ))}
            </List>
          )}
        </div>
      </Group>
      <Group gap={6} aria-label="Runs in the last hour by status" role="group">
        {HEALTH_RUN_STATUSES.map((s) => (
          <Badge key={s} variant="light" color={STATUS_COLOR[s]} radius="sm" size="sm" styles={darkText(STATUS_COLOR[s])} tt="none">
            {runStatusLabel(s)} {health.byStatus[s]}
          </Badge>
        ))}
      </Group>
      <SimpleGrid cols={3} spacing="xs" component="dl" m={0}>
        <Figure
          label="Waiting events"
          value={backlog.waitingEvents ?? 'Not counted'}
          detail={
            backlog.waitingEvents === null
              ? '(Kafka: see consumer lag)'
              : backlog.oldestWaitingAt
                ? `oldest ${age(now - Date.parse(backlog.oldestWaitingAt))}`
                : undefined
          }
        />
        <Figure
          label="Unfinished runs"
          value={backlog.unfinishedRuns}
          detail={backlog.oldestUnfinishedAt ? `oldest ${age(now - Date.parse(backlog.oldestUnfinishedAt))}` : undefined}
        />
        <Figure
          label="Dead-lettered"
          value={deadLettered.count}
          detail={
            deadLettered.last ? (
              <Anchor component={Link} to={`/runs/${deadLettered.last.runId}`} size="xs">
                the last one
              </Anchor>
            ) : undefined
          }
        />
      </SimpleGrid>
      {health.failingWorkflows.length > 0 && (
        <div>
          <Text size="xs" c="dimmed" mb={4} id="failing-title">
            Failing workflows (last hour)
          </Text>
          <Stack gap={6} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} aria-labelledby="failing-title">
            {health.failingWorkflows.slice(0, 5).map((w) => (
              <li key={w.workflowId} data-workflow-id={w.workflowId}>
                <Group justify="space-between" wrap="nowrap" gap="xs">
                  <Anchor component={Link} to={`/workflows/${w.workflowId}/runs`} size="sm" truncate>
                    {nameOf(w.workflowId)}
                  </Anchor>
                  <Group gap="xs" wrap="nowrap">
                    <Text size="xs" c="red.8" fw={600}>
                      {w.failed} of {w.runs} failed
                    </Text>
                    <Anchor component={Link} to={`/runs/${w.lastFailure.runId}`} size="xs" aria-label={`Last failure of ${nameOf(w.workflowId)}`}>
                      Last failure
                    </Anchor>
                  </Group>
                </Group>
                {w.lastFailure.error && (
                  <Text size="xs" c="dimmed" lineClamp={1} title={w.lastFailure.error} style={{ overflowWrap: 'anywhere' }}>
                    {w.lastFailure.error}
                  </Text>
                )}
              </li>
            ))}
          </Stack>
        </div>
      )}
    </Stack>
  );
}
