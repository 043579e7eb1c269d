import { Alert, Button, Checkbox, Code, CopyButton, Group, List, NativeSelect, NumberInput, Radio, Stack, Switch, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconCheck, IconCopy, IconEye, IconEyeOff, IconPlayerPlay, IconRefresh } from '@tabler/icons-react';
import { useMemo, useState, type ReactNode } from 'react';
import type { ResponseMode } from '@flowdesk/contracts';
import { api, type Project, type Workflow } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';
import { defaultFormConfig, FormTriggerSettings } from './FormTriggerSettings.tsx';
import {
  browserTimeZone,
  checkSchedule,
  cronToPreset,
  formatTick,
  MINUTE_STEPS,
  parseTime,
  presetToCron,
  timeOf,
  timeZones,
  TRIGGER_DESCRIPTION,
  TRIGGER_LABEL,
  WEEKDAYS,
  type SchedulePreset,
  type TriggerType,
} from './triggers.ts';

const Copy = ({ value, label }: { value: string; label: string }) => (
  <CopyButton value={value}>
    {({ copied, copy }) => (
      <Button
        size="xs"
        variant="light"
        leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
        onClick={copy}
        aria-label={copied ? 'Copied' : label}
      >
        {copied ? 'Copied' : 'Copy'}
      </Button>
    )}
  </CopyButton>
);

/** Trigger settings being edited: saved with the workflow (Save, Ctrl+S), refused before sending when `problem` is set. */
export interface TriggerDraft {
  config: Record<string, unknown>;
  problem: string | null;
}

/** What a trigger type's settings component gets from the panel. */
export interface TriggerSettingsProps {
  workflow: Workflow;
  /** The settings as edited (the draft), else as saved. */
  config: Record<string, unknown>;
  onDraft: (d: TriggerDraft) => void;
  secret: string | null;
  onSecret: (s: string | null) => void;
  /** Trigger settings changed (shown at once, before the server answers; put back if it refuses). */
  onChanged: (w: Pick<Workflow, 'webhook' | 'triggerConfig'>) => void;
  projects: Project[] | null;
  onRunNow: () => void;
}

/** One trigger type in the editor: its settings component, the settings a new trigger starts with, and what "active" means for it. */
export interface TriggerEditor {
  Settings: (props: TriggerSettingsProps) => ReactNode;
  /** Valid, so an active workflow can switch to this type. */
  defaultConfig: () => Record<string, unknown>;
  active: string;
  inactive: string;
}

const INACTIVE = 'Inactive: nothing starts it but Run now.';

/**
 * The editor's part of the trigger registry (libs/contracts trigger-types.ts), keyed by its
 * TriggerType: a type added there without an entry here does not compile.
 */
export const TRIGGER_EDITORS: { readonly [T in TriggerType]: TriggerEditor } = {
  webhook: {
    Settings: ({ workflow, secret, onSecret, onChanged }) => <WebhookSettings workflow={workflow} secret={secret} onSecret={onSecret} onChanged={onChanged} />,
    defaultConfig: () => ({}),
    active: 'Active: requests to this URL start the workflow.',
    inactive: 'Inactive: requests to this URL get 404 and start nothing.',
  },
  manual: {
    Settings: ({ onRunNow }) => <ManualSettings onRunNow={onRunNow} />,
    defaultConfig: () => ({}),
    active: 'Runs only when someone starts it (Run now), active or not.',
    inactive: 'Runs only when someone starts it (Run now), active or not.',
  },
  schedule: {
    Settings: ({ workflow, config, onDraft }) => <ScheduleSettings key={JSON.stringify(workflow.triggerConfig)} config={config} onDraft={onDraft} />,
    defaultConfig: () => ({ cron: '0 9 * * *', timezone: browserTimeZone(), missed: 'run_once' }),
    active: 'Active: it runs on this schedule.',
    inactive: INACTIVE,
  },
  note: {
    Settings: ({ config, onDraft, projects }) => <NoteSettings config={config} onDraft={onDraft} projects={projects} />,
    defaultConfig: () => ({}),
    active: 'Active: matching note changes start it.',
    inactive: INACTIVE,
  },
  entity: {
    Settings: ({ config, onDraft }) => <EntitySettings config={config} onDraft={onDraft} />,
    defaultConfig: () => ({ entity: 'task' }),
    active: 'Active: matching changes start it.',
    inactive: INACTIVE,
  },
  error: {
    Settings: () => (
      <Text size="sm" c="dimmed">
        Its trigger data is the failed run: <code>{'{{trigger.workflow.id}}'}</code>, <code>{'{{trigger.run.id}}'}</code>,{' '}
        <code>{'{{trigger.failedNode}}'}</code>, <code>{'{{trigger.error}}'}</code>. Name this workflow as the error workflow in another workflow&apos;s
        settings.
      </Text>
    ),
    defaultConfig: () => ({}),
    active: 'Runs when a workflow that names it as its error workflow fails (Settings of that workflow), active or not.',
    inactive: 'Runs when a workflow that names it as its error workflow fails (Settings of that workflow), active or not.',
  },
  form: {
    Settings: ({ workflow, config, onDraft }) => <FormTriggerSettings workflow={workflow} config={config} onDraft={onDraft} />,
    defaultConfig: defaultFormConfig,
    active: 'Active: the form takes answers at its URL; each one starts a run.',
    inactive: 'Inactive: the form’s URL answers “not found” and starts nothing.',
  },
};

/** The settings a new trigger of this type starts with (valid, so an active workflow can switch). */
export const defaultTriggerConfig = (type: TriggerType) => TRIGGER_EDITORS[type].defaultConfig();

/**
 * Trigger settings: the trigger type, then per type — webhook: the URL, the secret (revealed on
 * demand, regenerated after a warning), whether the secret is required, Standard Webhooks signing;
 * schedule: presets or a cron expression, time zone, missed ticks, with its description and next
 * runs; note and entity: which changes start it; manual: Run now. Webhook switches and the type are
 * saved at once; schedule, note and entity settings (a draft) and the execution order are saved with
 * the workflow.
 */
export function TriggerPanel(
  props: Omit<TriggerSettingsProps, 'config'> & {
    executionOrder: Workflow['executionOrder'];
    onExecutionOrder: (o: Workflow['executionOrder']) => void;
    draft: TriggerDraft | null;
    onTypeChange: (type: TriggerType) => Promise<void>;
  },
) {
  const { workflow, executionOrder, onExecutionOrder, draft, onTypeChange } = props;
  const [confirmingType, setConfirmingType] = useState<TriggerType | null>(null);
  const type = workflow.triggerType;
  const config = draft?.config ?? workflow.triggerConfig;
  const Settings = TRIGGER_EDITORS[type].Settings;
  const order = (
    <Radio.Group label="Execution order" description="Saved with the workflow." value={executionOrder} onChange={(v) => onExecutionOrder(v)}>
      <Stack gap={6} mt={6}>
        <Radio value="parallel" label="Concurrent" description="Runs go side by side (fastest)." />
        <Radio value="ordered" label="One at a time, in order" description="Each run starts after the previous one finished, in the order they were started." />
      </Stack>
    </Radio.Group>
  );
  return (
    <Stack gap="md">
      <NativeSelect
        label="Trigger type"
        description={TRIGGER_DESCRIPTION[type]}
        value={type}
        data={(Object.keys(TRIGGER_LABEL) as TriggerType[]).map((t) => ({ value: t, label: TRIGGER_LABEL[t] }))}
        onChange={(e) => {
          const next = e.currentTarget.value as TriggerType;
          if (workflow.active) setConfirmingType(next);
          else void onTypeChange(next);
        }}
      />
      <Alert
        color={workflow.active || type === 'manual' || type === 'error' ? 'green' : 'gray'}
        variant="light"
        radius="md"
        p="sm"
        data-testid="activation-state"
      >
        <Text size="sm" fw={600}>
          {workflow.active ? TRIGGER_EDITORS[type].active : TRIGGER_EDITORS[type].inactive}
        </Text>
        {type !== 'manual' && type !== 'error' && <Text size="xs">Switch it with “Active” at the top of the editor.</Text>}
      </Alert>
      <Settings {...props} config={config} />
      {order}
      <ConfirmDialog
        opened={confirmingType !== null}
        title={`Switch the trigger to ${confirmingType ? TRIGGER_LABEL[confirmingType] : ''}?`}
        confirmLabel="Switch trigger"
        onClose={() => setConfirmingType(null)}
        onConfirm={async () => {
          if (confirmingType) await onTypeChange(confirmingType);
        }}
      >
        This workflow is active: from now on only the new trigger starts it{type === 'webhook' ? ', and requests to its webhook URL get 404' : ''}.
      </ConfirmDialog>
    </Stack>
  );
}

// ---- manual ----

function ManualSettings({ onRunNow }: { onRunNow: () => void }) {
  return (
    <Stack gap="xs">
      <Text size="sm">
        A manual workflow runs when you start it: with <b>Run now</b> here or at the top of the editor, from a script (
        <Code>POST /api/v1/workflows/{'{id}'}/runs</Code>) or from an AI assistant (MCP <Code>set_workflow_active</Code> with <Code>runNow</Code>). The JSON
        payload you give becomes <Code>{'{{trigger.…}}'}</Code>.
      </Text>
      <Button leftSection={<IconPlayerPlay size={16} />} onClick={onRunNow} style={{ alignSelf: 'flex-start' }}>
        Run now
      </Button>
    </Stack>
  );
}

// ---- schedule ----

type PresetKind = SchedulePreset['kind'];
const PRESET_LABEL: Record<PresetKind, string> = {
  minutes: 'Every N minutes',
  hourly: 'Every hour',
  daily: 'Every day',
  weekly: 'Every week',
  custom: 'Custom (cron expression)',
};

function ScheduleSettings({ config, onDraft }: { config: Record<string, unknown>; onDraft: (d: TriggerDraft) => void }) {
  const initialCron = typeof config.cron === 'string' ? config.cron : '0 9 * * *';
  const [preset, setPreset] = useState<SchedulePreset>(() => cronToPreset(initialCron));
  // Fields as typed (a time being typed may be incomplete); the preset holds the last complete value.
  const [time, setTime] = useState(() => ('hour' in preset ? timeOf(preset.hour, preset.minute) : '09:00'));
  const [custom, setCustom] = useState(() => presetToCron(preset));
  const [timezone, setTimezone] = useState(() => (typeof config.timezone === 'string' ? config.timezone : 'UTC'));
  const [missed, setMissed] = useState(() => (config.missed === 'skip' ? 'skip' : 'run_once'));
  const zones = useMemo(() => timeZones(timezone), [timezone]);

  const timeProblem = preset.kind === 'daily' || preset.kind === 'weekly' ? (parseTime(time) ? null : 'Enter a time (HH:MM).') : null;
  const cron = preset.kind === 'custom' ? custom : presetToCron(preset);
  const check = checkSchedule(cron, timezone);
  const problem = timeProblem ?? (check.ok ? null : check.error);

  const emit = (next: { preset?: SchedulePreset; time?: string; custom?: string; timezone?: string; missed?: string }) => {
    const p = next.preset ?? preset;
    const t = next.time ?? time;
    const parsed = parseTime(t);
    const withTime = (p.kind === 'daily' || p.kind === 'weekly') && parsed ? { ...p, ...parsed } : p;
    const c = withTime.kind === 'custom' ? (next.custom ?? custom) : presetToCron(withTime);
    const tz = next.timezone ?? timezone;
    const r = checkSchedule(c, tz);
    const tp = (withTime.kind === 'daily' || withTime.kind === 'weekly') && !parsed ? 'Enter a time (HH:MM).' : null;
    setPreset(withTime);
    onDraft({
      config: { ...config, cron: c.trim().split(/\s+/).join(' '), timezone: tz, missed: next.missed ?? missed },
      problem: tp ?? (r.ok ? null : `Schedule: ${r.error}`),
    });
  };

  const kindChanged = (kind: PresetKind) => {
    const parsed = parseTime(time) ?? { hour: 9, minute: 0 };
    const p: SchedulePreset =
      kind === 'minutes'
        ? { kind, every: 15 }
        : kind === 'hourly'
          ? { kind, minute: 0 }
          : kind === 'daily'
            ? { kind, ...parsed }
            : kind === 'weekly'
              ? { kind, day: 1, ...parsed }
              : { kind, cron: presetToCron(preset) };
    if (kind === 'custom') setCustom(presetToCron(preset));
    emit({ preset: p, ...(kind === 'custom' ? { custom: presetToCron(preset) } : {}) });
  };

  return (
    <Stack gap="sm" role="group" aria-label="Schedule">
      <NativeSelect
        label="Repeat"
        value={preset.kind}
        data={(Object.keys(PRESET_LABEL) as PresetKind[]).map((k) => ({ value: k, label: PRESET_LABEL[k] }))}
        onChange={(e) => kindChanged(e.currentTarget.value as PresetKind)}
      />
      {preset.kind === 'minutes' && (
        <NativeSelect
          label="Every"
          value={String(preset.every)}
          data={MINUTE_STEPS.map((n) => ({ value: String(n), label: n === 1 ? '1 minute' : `${n} minutes` }))}
          onChange={(e) => emit({ preset: { kind: 'minutes', every: Number(e.currentTarget.value) } })}
        />
      )}
      {preset.kind === 'hourly' && (
        <NumberInput
          label="At minute"
          description="Minutes past every hour (0–59)."
          min={0}
          max={59}
          clampBehavior="strict"
          allowDecimal={false}
          value={preset.minute}
          onChange={(v) => emit({ preset: { kind: 'hourly', minute: typeof v === 'number' ? v : 0 } })}
        />
      )}
      {preset.kind === 'weekly' && (
        <NativeSelect
          label="On"
          value={String(preset.day)}
          data={WEEKDAYS.map((d, i) => ({ value: String(i), label: d }))}
          onChange={(e) => emit({ preset: { ...preset, day: Number(e.currentTarget.value) } })}
        />
      )}
      {(preset.kind === 'daily' || preset.kind === 'weekly') && (
        <TextInput
          type="time"
          label="At"
          value={time}
          error={timeProblem}
          onChange={(e) => {
            setTime(e.currentTarget.value);
            emit({ time: e.currentTarget.value });
          }}
        />
      )}
      {preset.kind === 'custom' && (
        <TextInput
          label="Cron expression"
          description="Five fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5."
          ff="monospace"
          value={custom}
          error={check.ok ? null : check.error}
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => {
            setCustom(e.currentTarget.value);
            emit({ custom: e.currentTarget.value });
          }}
        />
      )}
      <NativeSelect
        label="Time zone"
        description="The schedule is read in this zone, summer time included."
        value={timezone}
        data={zones}
        onChange={(e) => {
          setTimezone(e.currentTarget.value);
          emit({ timezone: e.currentTarget.value });
        }}
      />
      {problem
        ? preset.kind !== 'custom' && (
            <Text size="sm" c="red.8" role="alert" data-testid="schedule-error">
              {problem}
            </Text>
          )
        : check.ok && (
            <div data-testid="schedule-preview">
              <Text size="sm" fw={600}>
                {check.description}
                <Text span size="sm" c="dimmed" fw={400}>
                  {' '}
                  ({timezone})
                </Text>
              </Text>
              <Code>{check.cron}</Code>
              <Text size="xs" fw={650} tt="uppercase" c="dimmed" mt="xs" id="next-runs-title">
                Next 5 runs
              </Text>
              <List size="sm" spacing={2} aria-labelledby="next-runs-title" data-testid="next-runs">
                {check.next.map((d) => (
                  <List.Item key={d.toISOString()}>
                    <time dateTime={d.toISOString()}>{formatTick(d, timezone)}</time>
                  </List.Item>
                ))}
              </List>
            </div>
          )}
      <Radio.Group
        label="Missed runs"
        description="Ticks that passed while Flowdesk was not running."
        value={missed}
        onChange={(v) => {
          setMissed(v === 'skip' ? 'skip' : 'run_once');
          emit({ missed: v });
        }}
      >
        <Stack gap={6} mt={6}>
          <Radio value="run_once" label="Run once when it is back" />
          <Radio value="skip" label="Skip them" />
        </Stack>
      </Radio.Group>
    </Stack>
  );
}

// ---- note and entity ----

/** Settings without the filters left empty (the schema refuses empty strings; absent means "any"). */
function compact(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).filter(([, v]) => v !== '' && v !== undefined && !(Array.isArray(v) && v.length === 0)));
}

const NOTE_EVENTS = ['created', 'updated'] as const;

function NoteSettings({ config, onDraft, projects }: { config: Record<string, unknown>; onDraft: (d: TriggerDraft) => void; projects: Project[] | null }) {
  const events = Array.isArray(config.events) ? (config.events as string[]) : [...NOTE_EVENTS];
  const str = (k: string) => (typeof config[k] === 'string' ? config[k] : '');
  const set = (change: Record<string, unknown>) => {
    const next = { ...config, ...change };
    const ev = Array.isArray(next.events) ? (next.events as string[]) : [...NOTE_EVENTS];
    const { events: _e, ...rest } = next;
    const out = compact({ ...rest, ...(ev.length === NOTE_EVENTS.length ? {} : { events: ev }) });
    if (!out.projectId) delete out.projectId;
    onDraft({ config: out, problem: ev.length === 0 ? 'Note trigger: choose at least one event.' : null });
  };
  return (
    <Stack gap="sm" role="group" aria-label="Note trigger">
      <Checkbox.Group
        label="Start a run when a note is"
        value={events}
        onChange={(v) => set({ events: v })}
        error={events.length === 0 ? 'Choose at least one.' : null}
      >
        <Group gap="md" mt={6}>
          <Checkbox value="created" label="Created" />
          <Checkbox value="updated" label="Updated" />
        </Group>
      </Checkbox.Group>
      <Text size="sm" fw={500}>
        Only notes that match (leave empty for any)
      </Text>
      <NativeSelect
        label="Project"
        value={str('projectId')}
        data={[{ value: '', label: 'Any project' }, ...(projects ?? []).map((p) => ({ value: p.id, label: p.name }))]}
        onChange={(e) => set({ projectId: e.currentTarget.value })}
      />
      <TextInput label="Tag" placeholder="e.g. meeting" maxLength={50} value={str('tag')} onChange={(e) => set({ tag: e.currentTarget.value })} />
      <TextInput
        label="Title contains"
        description="Case-insensitive."
        maxLength={200}
        value={str('titleContains')}
        onChange={(e) => set({ titleContains: e.currentTarget.value })}
      />
    </Stack>
  );
}

const ENTITY_LABEL = { task: 'Task', project: 'Project', calendar_entry: 'Calendar entry' } as const;
type EntityKind = keyof typeof ENTITY_LABEL;
const eventsOf = (kind: EntityKind) => (kind === 'task' ? ['created', 'updated', 'completed', 'deleted'] : ['created', 'updated', 'deleted']);

function EntitySettings({ config, onDraft }: { config: Record<string, unknown>; onDraft: (d: TriggerDraft) => void }) {
  const kind: EntityKind = config.entity === 'project' || config.entity === 'calendar_entry' ? config.entity : 'task';
  const possible = eventsOf(kind);
  const events = Array.isArray(config.events) ? (config.events as string[]).filter((e) => possible.includes(e)) : possible;
  const set = (k: EntityKind, ev: string[]) => {
    const all = eventsOf(k);
    const chosen = all.filter((e) => ev.includes(e));
    const { events: _e, ...rest } = config;
    onDraft({
      config: { ...rest, entity: k, ...(chosen.length === all.length ? {} : { events: chosen }) },
      problem: chosen.length === 0 ? 'Entity trigger: choose at least one event.' : null,
    });
  };
  return (
    <Stack gap="sm" role="group" aria-label="Entity trigger">
      <NativeSelect
        label="Entity"
        value={kind}
        data={(Object.keys(ENTITY_LABEL) as EntityKind[]).map((k) => ({ value: k, label: ENTITY_LABEL[k] }))}
        onChange={(e) => set(e.currentTarget.value as EntityKind, events)}
      />
      <Checkbox.Group label="Start a run when it is" value={events} onChange={(v) => set(kind, v)} error={events.length === 0 ? 'Choose at least one.' : null}>
        <Group gap="md" mt={6}>
          {possible.map((e) => (
            <Checkbox key={e} value={e} label={e[0]!.toUpperCase() + e.slice(1)} />
          ))}
        </Group>
      </Checkbox.Group>
      {kind === 'task' && (
        <Text size="xs" c="dimmed">
          Completed: a task whose status became done.
        </Text>
      )}
    </Stack>
  );
}

// ---- webhook ----

/** The webhook's answer to its caller (triggerConfig.responseMode; docs/webhooks.md, "Answering the caller"). */
const RESPONSE_MODE_OPTIONS: { value: ResponseMode; label: string }[] = [
  { value: 'immediately', label: 'Immediately: {accepted, eventId}' },
  { value: 'finished', label: 'When the run finishes' },
  { value: 'respond_node', label: 'From a Respond node' },
];
const responseModeOf = (config: Record<string, unknown>): ResponseMode =>
  config.responseMode === 'finished' || config.responseMode === 'respond_node' ? config.responseMode : 'immediately';
const RESPONSE_MODE_HELP: Record<ResponseMode, string> = {
  immediately: 'Answers 200 {accepted, eventId} as soon as the delivery is stored; the run goes on afterwards.',
  finished: 'Waits for the run (up to RESPOND_TIMEOUT_MS, 10 s by default) and answers {runId, status, output}; later: 202 with a link to poll.',
  respond_node: 'The first Respond step of the run answers (status, headers, body); a run that reaches none answers as “when the run finishes”.',
};

function WebhookSettings({
  workflow,
  secret,
  onSecret,
  onChanged,
}: {
  workflow: Workflow;
  secret: string | null;
  onSecret: (s: string | null) => void;
  onChanged: (w: Pick<Workflow, 'webhook' | 'triggerConfig'>) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const hook = workflow.webhook;
  const signed = workflow.triggerConfig.signature === 'standard-webhooks';
  const responseMode = responseModeOf(workflow.triggerConfig);

  const patch = async (change: Parameters<typeof api.updateWorkflow>[1], shown: Pick<Workflow, 'webhook' | 'triggerConfig'>, done: string) => {
    const before = { webhook: workflow.webhook, triggerConfig: workflow.triggerConfig };
    onChanged(shown);
    try {
      onChanged(await api.updateWorkflow(workflow.id, change));
      notifications.show({ color: 'green', message: done });
    } catch (err) {
      onChanged(before);
      notifications.show({ color: 'red', title: 'Could not change the trigger', message: (err as Error).message });
    }
  };

  const reveal = async () => {
    if (secret) return onSecret(null);
    try {
      onSecret((await api.webhookSecret(workflow.id)).secret);
    } catch (err) {
      notifications.show({ color: 'red', title: 'Could not show the secret', message: (err as Error).message });
    }
  };

  if (!hook)
    return (
      <Text size="sm" c="dimmed">
        The webhook URL appears once the workflow is saved with this trigger.
      </Text>
    );

  return (
    <Stack gap="md">
      <div>
        <Text size="sm" fw={500} mb={4}>
          Webhook URL
        </Text>
        <Group gap={6} wrap="nowrap" align="flex-start">
          <Code block fz={12} style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }} data-testid="webhook-url">
            {hook.url}
          </Code>
          <Copy value={hook.url} label="Copy webhook URL" />
        </Group>
        <Text size="xs" c="dimmed" mt={4}>
          Senders POST JSON here; its fields become <code>{'{{trigger.…}}'}</code> variables.
        </Text>
      </div>
      <Switch
        label="Require x-webhook-secret"
        description={
          signed
            ? 'Signed deliveries need no x-webhook-secret: the signature, made with the secret below, authenticates them.'
            : 'Refuse requests (401) whose x-webhook-secret header is not the secret below.'
        }
        disabled={signed}
        checked={hook.requireSecret}
        onChange={(e) => {
          const on = e.currentTarget.checked;
          void patch(
            { requireWebhookSecret: on },
            { webhook: { ...hook, requireSecret: on }, triggerConfig: workflow.triggerConfig },
            on ? 'Requests now need the secret.' : 'Requests no longer need the secret.',
          );
        }}
      />
      <div>
        <Text size="sm" fw={500} mb={4}>
          Secret
        </Text>
        <Group gap={6} wrap="nowrap" align="flex-start">
          <Code block fz={12} style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }} data-testid="webhook-secret">
            {secret ?? '••••••••••••••••••••••••'}
          </Code>
          {secret && <Copy value={secret} label="Copy secret" />}
        </Group>
        <Group gap="xs" mt={6}>
          <Button size="xs" variant="default" leftSection={secret ? <IconEyeOff size={14} /> : <IconEye size={14} />} onClick={() => void reveal()}>
            {secret ? 'Hide secret' : 'Reveal secret'}
          </Button>
          <Button size="xs" variant="default" color="red" leftSection={<IconRefresh size={14} />} onClick={() => setConfirming(true)}>
            Regenerate secret
          </Button>
        </Group>
      </div>
      <Switch
        label="Sign deliveries (Standard Webhooks)"
        description="Also require webhook-id, webhook-timestamp and webhook-signature (HMAC-SHA256 with this secret); deliveries older than 5 minutes are refused."
        checked={signed}
        onChange={(e) => {
          const on = e.currentTarget.checked;
          const { signature: _old, ...rest } = workflow.triggerConfig;
          const triggerConfig = on ? { ...rest, signature: 'standard-webhooks' } : rest;
          void patch({ triggerConfig }, { webhook: hook, triggerConfig }, on ? 'Signed deliveries are required now.' : 'Signatures are no longer checked.');
        }}
      />
      {signed && <OwnSigningSecret workflowId={workflow.id} onSet={() => onSecret(null)} />}
      <NativeSelect
        label="Answer the caller"
        description={RESPONSE_MODE_HELP[responseMode]}
        data-testid="webhook-response-mode"
        value={responseMode}
        data={RESPONSE_MODE_OPTIONS}
        onChange={(e) => {
          const mode = e.currentTarget.value;
          const { responseMode: _old, ...rest } = workflow.triggerConfig;
          const triggerConfig = mode === 'immediately' ? rest : { ...rest, responseMode: mode };
          void patch({ triggerConfig }, { webhook: hook, triggerConfig }, 'The webhook answers its callers this way now.');
        }}
      />
      <ConfirmDialog
        opened={confirming}
        title="Regenerate the webhook secret?"
        confirmLabel="Regenerate secret"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          try {
            const fresh = await api.regenerateWebhookSecret(workflow.id);
            onSecret(fresh.secret);
            notifications.show({ color: 'green', message: 'New secret created. Update your senders.' });
          } catch (err) {
            notifications.show({ color: 'red', title: 'Could not regenerate the secret', message: (err as Error).message });
          }
        }}
      >
        The current secret stops working at once: every sender still using it gets 401 until you update it with the new secret.
      </ConfirmDialog>
    </Stack>
  );
}

/**
 * "Use my own signing secret": the whsec_… secret a provider (Svix, Clerk, Resend) shows replaces the
 * generated one (PUT /workflows/:id/webhook-secret). Write-only: the server answers its last four characters.
 */
function OwnSigningSecret({ workflowId, onSet }: { workflowId: string; onSet: () => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const set = await api.setWebhookSecret(workflowId, value.trim());
      setValue('');
      onSet();
      notifications.show({ color: 'green', message: `Signing secret saved (ending in ${set.secretEnding}). Deliveries signed with the old one are refused.` });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Group gap="xs" align="flex-end" wrap="nowrap">
      <TextInput
        style={{ flex: 1 }}
        type="password"
        autoComplete="off"
        label="Use my own signing secret"
        description="The whsec_… secret the sending service shows (Svix, Clerk, Resend…). It replaces the secret above."
        placeholder="whsec_…"
        value={value}
        error={error}
        onChange={(e) => setValue(e.currentTarget.value)}
      />
      <Button size="sm" variant="default" loading={busy} disabled={value.trim() === ''} onClick={() => void save()}>
        Save secret
      </Button>
    </Group>
  );
}
