import { expect, test } from 'vitest';
import type { OwnerUsage } from '@flowdesk/contracts';
import { budgetPercent, easesIn, workflowThrottle } from './throttle.ts';

const WF = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const usage = (change: Partial<OwnerUsage> = {}): OwnerUsage => ({
  ownerId: '33333333-3333-4333-8333-333333333333',
  checkedAt: '2026-03-01T12:00:00.000Z',
  runs: 10,
  runsFinished: 8,
  throttled: 0,
  refused: {},
  inFlight: 0,
  ownerConcurrency: 4,
  queued: 0,
  maxBacklog: 1000,
  intakeThrottled: false,
  retryAfterSeconds: null,
  sandbox: { usedMsPerMinute: 5000, budgetMsPerMinute: 20000, totalMs: 9000, jobs: 3, timeouts: 0, memoryKills: 0, waiting: 0, overBudget: false },
  throttle: { active: false, reasons: [] },
  recentRefusals: [],
  workflows: [],
  ...change,
});

test('an owner not throttled: no workflow is', () => {
  expect(workflowThrottle(usage(), WF)).toBeNull();
});

test('webhooks refused (backlog): every workflow of the owner is throttled, with the setting and when it eases', () => {
  const u = usage({
    intakeThrottled: true,
    throttle: {
      active: true,
      reasons: [{ reason: 'backlog', setting: 'ENGINE_OWNER_MAX_BACKLOG', message: '1200 runs wait in your queue', retryAfterSeconds: 12 }],
    },
    workflows: [{ workflowId: WF, queued: 1200, reason: 'backlog', retryAfterSeconds: 12 }],
  });
  expect(workflowThrottle(u, WF)).toMatchObject({ reason: 'backlog', label: 'webhooks refused (429)', eases: 'in about 12 s' });
  expect(workflowThrottle(u, WF)!.detail).toMatch(/ENGINE_OWNER_MAX_BACKLOG.*1200 of this workflow/);
  expect(workflowThrottle(u, OTHER)?.reason).toBe('backlog');
});

test('runs queued behind the in-flight cap: only the workflows with queued runs', () => {
  const u = usage({
    inFlight: 4,
    queued: 3,
    throttle: {
      active: true,
      reasons: [{ reason: 'in_flight', setting: 'ENGINE_OWNER_CONCURRENCY', message: '4 of your runs are in flight', retryAfterSeconds: null }],
    },
    workflows: [{ workflowId: WF, queued: 3, reason: 'in_flight', retryAfterSeconds: null }],
  });
  expect(workflowThrottle(u, WF)).toMatchObject({ reason: 'in_flight', eases: 'as your running runs end' });
  expect(workflowThrottle(u, OTHER)).toBeNull();
});

test('the sandbox budget used up throttles the owner’s workflows; the bar is capped at 100 %', () => {
  const u = usage({
    sandbox: { usedMsPerMinute: 30000, budgetMsPerMinute: 20000, totalMs: 30000, jobs: 9, timeouts: 2, memoryKills: 0, waiting: 2, overBudget: true },
    throttle: {
      active: true,
      reasons: [{ reason: 'sandbox_budget', setting: 'ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE', message: 'over the budget', retryAfterSeconds: 30 }],
    },
  });
  expect(workflowThrottle(u, OTHER)).toMatchObject({ reason: 'sandbox_budget', eases: 'in about 30 s' });
  expect(budgetPercent(u)).toBe(100);
  expect(budgetPercent(usage())).toBe(25);
});

test('eases: seconds, minutes, or the fallback', () => {
  expect(easesIn(0)).toBe('in about 1 s');
  expect(easesIn(600)).toBe('in about 10 min');
  expect(easesIn(null)).toBe('as your running runs end');
});
