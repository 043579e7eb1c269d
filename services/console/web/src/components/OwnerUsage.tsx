/**
 * The owner's share of the engine (GET /api/v1/workflow-runs/usage, contracts OwnerUsage): a
 * "Throttled" badge for the workflow editor's header and a card for the Overview. Read every few
 * seconds while the page is visible; an engine that does not answer shows nothing on the badge and
 * says so on the card.
 */
import { Anchor, Badge, Card, Group, Progress, SimpleGrid, Stack, Text, ThemeIcon, Title, Tooltip } from '@mantine/core';
import { IconGauge } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import type { OwnerUsage } from '@flowdesk/contracts';
import { api } from '../api.ts';
import { Link } from '../router.tsx';
import { budgetPercent, easesIn, workflowThrottle } from '../throttle.ts';

const POLL_MS = 5_000;

/** The usage, read now and every POLL_MS while the page is visible. */
export function useOwnerUsage(): { usage: OwnerUsage | null; error: string | null } {
  const [state, setState] = useState<{ usage: OwnerUsage | null; error: string | null }>({ usage: null, error: null });
  useEffect(() => {
    let stopped = false;
    const load = () =>
      api.request<OwnerUsage>('GET', '/workflow-runs/usage').then(
        (usage) => !stopped && setState({ usage, error: null }),
        (err: unknown) => !stopped && setState((s) => ({ usage: s.usage, error: (err as Error).message })),
      );
    void load();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load();
    }, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  return state;
}

/** "Throttled · <reason>" with when it eases, or nothing while the workflow is not throttled. */
export function ThrottleBadge({ workflowId }: { workflowId: string }) {
  const { usage } = useOwnerUsage();
  const view = usage ? workflowThrottle(usage, workflowId) : null;
  if (!view) return null;
  const text = `${view.detail} Eases ${view.eases}.`;
  return (
    <Tooltip label={text} multiline w={320} withArrow>
      <Badge
        variant="light"
        color="orange"
        c="dark.8"
        tt="none"
        tabIndex={0}
        role="status"
        aria-label={`Throttled: ${view.label}. ${text}`}
        data-testid="throttle-badge"
        style={{ flexShrink: 1, minWidth: 0, maxWidth: '100%' }}
      >
        Throttled · {view.label} · eases {view.eases}
      </Badge>
    </Tooltip>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed" component="dt">
        {label}
      </Text>
      <Text size="sm" fw={600} component="dd" m={0}>
        {value}
      </Text>
    </div>
  );
}

/** The Overview's card: sandbox budget, in flight, backlog, throttled workflows (linked) and the latest refusals. */
export function OwnerUsageCard({ workflows }: { workflows: Map<string, { name: string }> }) {
  const { usage, error } = useOwnerUsage();
  return (
    <Card withBorder radius="lg" padding="lg" component="section" aria-labelledby="usage-title" data-testid="owner-usage">
      <Group gap="sm" mb="xs">
        <ThemeIcon variant="light" radius="md" aria-hidden>
          <IconGauge size={18} />
        </ThemeIcon>
        <Title order={2} size="h5" id="usage-title">
          Your share of the engine
        </Title>
      </Group>
      {!usage ? (
        <Text size="sm" c={error ? 'red.8' : 'dimmed'} role={error ? 'alert' : 'status'}>
          {error ? `Your usage could not be read: ${error}` : 'Loading…'}
        </Text>
      ) : (
        <Stack gap="sm">
          <Text size="sm" fw={650} c={usage.throttle.active ? 'red.8' : 'teal.9'} data-testid="usage-verdict">
            {usage.throttle.active ? 'Throttled now' : 'Not throttled: your runs start as they come'}
          </Text>
          {usage.throttle.reasons.map((r) => (
            <Text key={r.reason} size="sm">
              {r.message} ({r.setting}); eases {easesIn(r.retryAfterSeconds)}.
            </Text>
          ))}
          <div>
            <Text size="xs" c="dimmed" id="budget-label">
              Sandbox time this minute: {usage.sandbox.usedMsPerMinute.toLocaleString()} of {usage.sandbox.budgetMsPerMinute.toLocaleString()} ms
            </Text>
            <Progress.Root mt={4}>
              <Progress.Section
                value={budgetPercent(usage)}
                color={usage.sandbox.overBudget ? 'orange' : 'indigo'}
                aria-label={`Sandbox time this minute, ${budgetPercent(usage)} % of your budget`}
              />
            </Progress.Root>
          </div>
          <SimpleGrid cols={{ base: 2, xs: 3 }} spacing="xs" component="dl" m={0}>
            <Figure label="In flight" value={`${usage.inFlight} of ${usage.ownerConcurrency}`} />
            <Figure label="Waiting (backlog)" value={usage.maxBacklog > 0 ? `${usage.queued} of ${usage.maxBacklog}` : String(usage.queued)} />
            <Figure label="Stopped at a limit" value={`${usage.sandbox.timeouts + usage.sandbox.memoryKills}`} />
          </SimpleGrid>
          {usage.workflows.length > 0 && (
            <div>
              <Text size="xs" c="dimmed" id="throttled-workflows">
                Throttled workflows
              </Text>
              <Stack gap={4} component="ul" aria-labelledby="throttled-workflows" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                {usage.workflows.slice(0, 6).map((w) => (
                  <Group component="li" key={w.workflowId} justify="space-between" wrap="nowrap" gap="xs">
                    <Anchor component={Link} to={`/workflows/${w.workflowId}`} size="sm" truncate>
                      {workflows.get(w.workflowId)?.name ?? 'Workflow'}
                    </Anchor>
                    <Text size="xs" c="dimmed" style={{ flexShrink: 0 }}>
                      {w.queued} waiting · {w.reason === 'backlog' ? 'webhooks refused' : 'queued'}
                    </Text>
                  </Group>
                ))}
              </Stack>
            </div>
          )}
          {usage.recentRefusals.length > 0 && (
            <Text size="sm" c="red.8" data-testid="usage-refusal">
              Latest refused start ({usage.recentRefusals[0]!.setting}): {usage.recentRefusals[0]!.message}
            </Text>
          )}
        </Stack>
      )}
    </Card>
  );
}
