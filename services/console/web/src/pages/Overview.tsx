import { Anchor, Card, Code, Group, SimpleGrid, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconActivityHeartbeat, IconApi, IconApps, IconChecklist, IconKey, IconPlayerPlay, IconPlugConnected } from '@tabler/icons-react';
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { api, type ConnectedApp, type SessionInfo } from '../api.ts';
import { OwnerUsageCard } from '../components/OwnerUsage.tsx';
import { PipelineHealth } from '../components/PipelineHealth.tsx';
import { RunStatusBadge } from '../components/RunStatus.tsx';
import { PageHeader } from '../components/States.tsx';
import { ago } from '../format.ts';
import { Link } from '../router.tsx';
import { subscribeRuns, workspace, type RunsHealth, type RunsSummary, type Task, type WorkflowItem, type WorkflowRun } from '../workspace.ts';
import { DueBadge } from './Tasks.tsx';

/** Where a card's link at the bottom goes: a console page (`to`) or a page of its own in a new tab (`href`). */
type CardLink = { label: string } & ({ to: string } | { href: string });

/** One card of the overview: an icon, a title, its content and an optional link at the bottom. */
function OverviewCard({ icon, title, children, link, id }: { icon: ReactNode; title: string; children: ReactNode; link?: CardLink; id: string }) {
  return (
    <Card withBorder radius="lg" padding="lg" component="section" aria-labelledby={id}>
      <Group gap="sm" mb="xs">
        <ThemeIcon variant="light" radius="md" aria-hidden>
          {icon}
        </ThemeIcon>
        <Title order={2} size="h5" id={id}>
          {title}
        </Title>
      </Group>
      <div style={{ flex: 1 }}>{children}</div>
      {link && (
        <div style={{ marginTop: 12 }}>
          {'to' in link ? (
            <Anchor component={Link} to={link.to} size="sm" fw={550}>
              {`${link.label} →`}
            </Anchor>
          ) : (
            <Anchor href={link.href} target="_blank" size="sm" fw={550}>
              {`${link.label} →`}
            </Anchor>
          )}
        </div>
      )}
    </Card>
  );
}

/** A card's short list: one row an item, what it is on the left, what to know about it on the right. */
function CardList({ children }: { children: ReactNode }) {
  return (
    <Stack gap={6} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
      {children}
    </Stack>
  );
}

function CardRow({ children }: { children: ReactNode }) {
  return (
    <Group component="li" justify="space-between" wrap="nowrap" gap="xs">
      {children}
    </Group>
  );
}

const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
/** The pipeline's backlog grows without run events (a stalled engine sends none): read it again this often while visible. */
const HEALTH_POLL_MS = 15_000;
/** A burst of run events is one reload. */
const COALESCE_MS = 300;

interface Data {
  due: Task[];
  runs: WorkflowRun[];
  summary: RunsSummary;
  workflows: Map<string, WorkflowItem>;
  apps: ConnectedApp[];
}

/** The home page: what is due, recent runs and failures, connected apps, and how to connect. */
export function OverviewPage({ session }: { session: SessionInfo }) {
  const first = (session.user.name || session.user.email).split(/\s+/)[0];
  const mcpUrl = `${window.location.origin}/functions/v1/mcp-server-v2`;
  const [data, setData] = useState<Data | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Read on its own: the engine's health answering late or not at all leaves the rest of the page alone.
  const [health, setHealth] = useState<{ value: RunsHealth } | { error: string } | null>(null);

  // State is set in the answers' callbacks, never synchronously in the effect that loads them.
  const load = useCallback(
    () =>
      Promise.all([
        workspace.listTasks({ status: ['todo', 'in_progress'], dueBefore: inDays(7), sort: 'due_asc' }),
        workspace.listRuns({ limit: 6 }),
        workspace.runsSummary(),
        workspace.listWorkflows(),
        api.listConnectedApps(),
      ]).then(
        ([due, runs, summary, workflows, apps]) => {
          setData({ due: due.slice(0, 8), runs, summary, workflows: new Map(workflows.map((w) => [w.id, w])), apps });
          setError(null);
        },
        (err: unknown) => setError((err as Error).message),
      ),
    [],
  );
  const loadHealth = useCallback(
    () =>
      workspace.runsHealth().then(
        (value) => setHealth({ value }),
        (err: unknown) => setHealth({ error: (err as Error).message }),
      ),
    [],
  );
  useEffect(() => {
    void load();
    void loadHealth();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = subscribeRuns(() => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void load();
        void loadHealth();
      }, COALESCE_MS);
    });
    const poll = setInterval(() => {
      if (document.visibilityState === 'visible') void loadHealth();
    }, HEALTH_POLL_MS);
    return () => {
      clearTimeout(timer);
      clearInterval(poll);
      off();
    };
  }, [load, loadHealth]);

  const placeholder = <Skeleton role="status" height={72} radius="md" aria-label="Loading" />;
  return (
    <>
      <PageHeader title={`Welcome, ${first}`} description="What is due, what your workflows did, and what is connected to your workspace." />
      {error && (
        <Text c="red.8" size="sm" role="alert" mb="md">
          Part of the overview could not be loaded: {error}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md" mb="md">
        <OverviewCard id="due-title" icon={<IconChecklist size={18} />} title="Due this week" link={{ to: '/tasks', label: 'All tasks' }}>
          {!data ? (
            placeholder
          ) : data.due.length === 0 ? (
            <Text size="sm" c="dimmed">
              Nothing is due in the next seven days.
            </Text>
          ) : (
            <CardList>
              {data.due.map((t) => (
                <CardRow key={t.id}>
                  <Text size="sm" truncate>
                    {t.title}
                  </Text>
                  <DueBadge task={t} />
                </CardRow>
              ))}
            </CardList>
          )}
        </OverviewCard>
        <OverviewCard id="runs-title" icon={<IconPlayerPlay size={18} />} title="Recent runs" link={{ to: '/runs', label: 'All runs' }}>
          {!data ? (
            placeholder
          ) : (
            <Stack gap="xs">
              <Text size="sm" c={data.summary.failed > 0 ? 'red.8' : 'dimmed'} fw={data.summary.failed > 0 ? 600 : undefined}>
                {data.summary.runs} {data.summary.runs === 1 ? 'run' : 'runs'} in the last 24 hours, {data.summary.failed} failed
              </Text>
              {data.runs.length === 0 ? (
                <Text size="sm" c="dimmed">
                  No runs yet: runs appear when a webhook triggers an active workflow.
                </Text>
              ) : (
                <CardList>
                  {data.runs.map((r) => (
                    <CardRow key={r.id}>
                      <Anchor component={Link} to={`/runs/${r.id}`} size="sm" truncate>
                        {data.workflows.get(r.workflowId)?.name ?? 'Workflow'}
                      </Anchor>
                      <Group gap="xs" wrap="nowrap">
                        <Text size="xs" c="dimmed">
                          {ago(r.startedAt ?? r.createdAt)}
                        </Text>
                        <RunStatusBadge status={r.status} />
                      </Group>
                    </CardRow>
                  ))}
                </CardList>
              )}
            </Stack>
          )}
        </OverviewCard>
        <OverviewCard
          id="pipeline-title"
          icon={<IconActivityHeartbeat size={18} />}
          title="Run pipeline"
          link={{ to: '/runs?status=failed', label: 'Failed runs' }}
        >
          {!health ? (
            placeholder
          ) : 'error' in health ? (
            <Text size="sm" c="red.8" role="alert">
              The pipeline’s health could not be read: {health.error}
            </Text>
          ) : (
            <PipelineHealth health={health.value} workflows={data?.workflows ?? new Map()} />
          )}
        </OverviewCard>
        <OwnerUsageCard workflows={data?.workflows ?? new Map()} />
        <OverviewCard
          id="apps-title"
          icon={<IconApps size={18} />}
          title="Connected apps"
          link={{ to: '/settings/connected-apps', label: 'Manage connected apps' }}
        >
          {!data ? (
            placeholder
          ) : data.apps.length === 0 ? (
            <Text size="sm" c="dimmed">
              Nothing is connected yet. Connect an MCP client or create an API key below.
            </Text>
          ) : (
            <CardList>
              {data.apps.slice(0, 6).map((a) => (
                <CardRow key={a.id}>
                  <Text size="sm" truncate>
                    {a.name}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {a.type === 'api_key' ? 'API key' : 'OAuth app'} · {a.lastUsedAt ? `used ${ago(a.lastUsedAt).toLowerCase()}` : 'never used'}
                  </Text>
                </CardRow>
              ))}
            </CardList>
          )}
        </OverviewCard>
        <OverviewCard id="mcp-title" icon={<IconPlugConnected size={18} />} title="Connect an MCP client">
          <Text size="sm" c="dimmed" mb="sm">
            Add this server URL to Claude, Cursor or any MCP client. It asks you to approve access in the browser.
          </Text>
          <Code block tabIndex={0} aria-label="MCP server URL" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
            {mcpUrl}
          </Code>
        </OverviewCard>
        <OverviewCard id="keys-title" icon={<IconKey size={18} />} title="Create an API key" link={{ to: '/settings/api-keys', label: 'Go to API keys' }}>
          <Text size="sm" c="dimmed">
            For scripts and clients without a browser: a key with Read or Read + Write access.
          </Text>
        </OverviewCard>
        <OverviewCard id="api-title" icon={<IconApi size={18} />} title="Use the API" link={{ href: '/api/v1/docs', label: 'Open the API reference' }}>
          <Text size="sm" c="dimmed">
            Everything the console does goes through the public API at <Code>/api/v1</Code>.
          </Text>
        </OverviewCard>
      </SimpleGrid>
    </>
  );
}
