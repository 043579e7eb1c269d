import { Anchor, Button, Group, SegmentedControl, Select, Table, Text, Tooltip } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { IconPlayerPlay } from '@tabler/icons-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { EmptyState, ErrorState, PageHeader } from '../components/States.tsx';
import { RunStatusBadge, duration, runStatusLabel } from '../components/RunStatus.tsx';
import { ago, exact } from '../format.ts';
import { api } from '../api.ts';
import { Link, openRowOnClick } from '../router.tsx';
import { triggerLabel } from '../workflows/triggers.ts';
import { RUN_STATUSES, subscribeRuns, workspace, type RunStatus, type WorkflowItem, type WorkflowRun } from '../workspace.ts';
import { TableRegion } from '../components/TableRegion.tsx';

/** Runs per page of the list (and per "Show older runs"). */
const PAGE = 50;

/** What started a run, in words: "Schedule", "Manual by ada@example.com", "Run again". */
export const triggerOf = (run: WorkflowRun) => triggerLabel(run, api.currentUser);

/**
 * The runs of one workflow (`/workflows/:id/runs`) or of all (`/runs`): newest first, filtered by
 * status, kept current by the runs stream (no reload).
 */
export function RunsPage({ workflowId }: { workflowId?: string }) {
  // ?status=failed (the Overview's "Failed runs" link) opens the list filtered.
  const [status, setStatus] = useState<RunStatus | 'all'>(() => {
    const wanted = new URLSearchParams(window.location.search).get('status');
    return RUN_STATUSES.find((s) => s === wanted) ?? 'all';
  });
  const [runs, setRuns] = useState<WorkflowRun[] | null>(null);
  /** How many of the newest runs the list holds: PAGE, then a page more per "Show older runs". */
  const [count, setCount] = useState(PAGE);
  const [more, setMore] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [workflows, setWorkflows] = useState<Map<string, WorkflowItem>>(new Map());
  const [error, setError] = useState<string | null>(null);
  /** The list asked for; an answer to an older query (another status, fewer runs) is dropped. */
  const query = useMemo(() => ({ status, count }), [status, count]);
  const latest = useRef(query);
  useEffect(() => {
    latest.current = query;
  }, [query]);

  const load = useCallback(
    () =>
      workspace
        .listRunsUpTo({ workflowId, status: query.status === 'all' ? undefined : query.status, count: query.count })
        .then(
          (page) => {
            if (latest.current === query) {
              setRuns(page.items);
              setMore(page.more);
            }
            setError(null);
          },
          (err: unknown) => setError((err as Error).message),
        )
        .finally(() => setLoadingOlder(false)),
    [workflowId, query],
  );
  useEffect(() => {
    void load();
  }, [load]);
  // The stream's reloads use the current query without reconnecting when it changes.
  const loadLatest = useRef(load);
  useEffect(() => {
    loadLatest.current = load;
  }, [load]);
  // Another status starts from the newest page again.
  const chooseStatus = (s: RunStatus | 'all') => {
    setCount(PAGE);
    setStatus(s);
  };

  useEffect(() => {
    workspace
      .listWorkflows()
      .then((all) => setWorkflows(new Map(all.map((w) => [w.id, w]))))
      .catch(() => {});
  }, []);

  // Live: every run event reloads the page of runs (coalesced: a burst of events is one reload).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = subscribeRuns(() => {
      clearTimeout(timer);
      timer = setTimeout(() => void loadLatest.current(), 150);
    }, workflowId);
    return () => {
      clearTimeout(timer);
      off();
    };
  }, [workflowId]);

  const workflow = workflowId ? workflows.get(workflowId) : undefined;
  const title = workflowId ? `Runs · ${workflow?.name ?? 'Workflow'}` : 'Runs';
  const phone = useMediaQuery('(max-width: 36em)', false);
  const filterData = useMemo(() => [{ value: 'all', label: 'All' }, ...RUN_STATUSES.map((s) => ({ value: s, label: runStatusLabel(s) }))], []);

  return (
    <>
      <PageHeader
        title={title}
        description={
          workflowId
            ? 'Every run of this workflow, newest first. New runs appear as they happen.'
            : 'Every run of your workflows, newest first. New runs appear as they happen.'
        }
        action={
          workflowId ? (
            <Anchor component={Link} to="/runs" size="sm">
              All runs
            </Anchor>
          ) : undefined
        }
      />
      <Group mb="md" justify="space-between" wrap="wrap" gap="sm">
        {/* Six status filters (All and five statuses) do not fit a phone's width side by side: there they are a list to pick from. */}
        {phone ? (
          <Select
            aria-label="Filter by status"
            value={status}
            onChange={(v) => v && chooseStatus(v as RunStatus | 'all')}
            data={filterData}
            allowDeselect={false}
            size="sm"
            w={180}
          />
        ) : (
          <SegmentedControl
            aria-label="Filter by status"
            value={status}
            onChange={(v) => chooseStatus(v as RunStatus | 'all')}
            data={filterData}
            size="xs"
            style={{ maxWidth: '100%', overflowX: 'auto' }}
          />
        )}
        <Text size="xs" c="dimmed" aria-live="polite">
          <span className="fd-live-dot" aria-hidden /> Live
        </Text>
      </Group>
      {error && <ErrorState title="Runs could not be loaded" message={error} onRetry={() => void load()} />}
      {runs && runs.length === 0 && (
        <EmptyState icon={<IconPlayerPlay size={24} />} title={status === 'all' ? 'No runs yet' : `No ${runStatusLabel(status).toLowerCase()} runs`}>
          {status === 'all'
            ? 'Runs appear here the moment a trigger starts an active workflow, or someone runs one with Run now.'
            : 'Choose another status to see more runs.'}
        </EmptyState>
      )}
      {runs && runs.length > 0 && (
        <TableRegion label="Runs">
          <Table verticalSpacing="sm" highlightOnHover aria-label="Runs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Status</Table.Th>
                {!workflowId && <Table.Th>Workflow</Table.Th>}
                <Table.Th>Started</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Trigger</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.map((run) => (
                <Table.Tr key={run.id} data-run-id={run.id} onClick={openRowOnClick(`/runs/${run.id}`)} style={{ cursor: 'pointer' }}>
                  <Table.Td>
                    <Anchor
                      component={Link}
                      to={`/runs/${run.id}`}
                      aria-label={`Run of ${ago(run.startedAt ?? run.createdAt)}: ${runStatusLabel(run.status)}`}
                      underline="never"
                    >
                      <RunStatusBadge status={run.status} />
                    </Anchor>
                  </Table.Td>
                  {!workflowId && (
                    <Table.Td>
                      <Anchor component={Link} to={`/workflows/${run.workflowId}/runs`} size="sm">
                        {workflows.get(run.workflowId)?.name ?? 'Workflow'}
                      </Anchor>
                    </Table.Td>
                  )}
                  <Table.Td>
                    <Tooltip label={exact(run.startedAt ?? run.createdAt)}>
                      <Text size="sm" component="span">
                        {ago(run.startedAt ?? run.createdAt)}
                      </Text>
                    </Tooltip>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{duration(run.durationMs)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" c="dimmed">
                      {triggerOf(run)}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableRegion>
      )}
      {runs && runs.length > 0 && (
        <Group justify="center" mt="md">
          {more ? (
            <Button
              variant="default"
              size="sm"
              loading={loadingOlder}
              onClick={() => {
                setLoadingOlder(true);
                setCount((c) => c + PAGE);
              }}
            >
              Show older runs
            </Button>
          ) : (
            <Text size="xs" c="dimmed">
              {runs.length === 1 ? 'The only run' : `All ${runs.length} runs`}
              {status === 'all' ? '' : ` with status ${runStatusLabel(status).toLowerCase()}`}
            </Text>
          )}
        </Group>
      )}
    </>
  );
}
