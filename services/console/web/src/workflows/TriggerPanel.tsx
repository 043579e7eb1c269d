import { Alert, Button, Code, CopyButton, Group, Radio, Stack, Switch, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconCheck, IconCopy, IconEye, IconEyeOff, IconRefresh } from '@tabler/icons-react';
import { useState } from 'react';
import { api, type Workflow } from '../api.ts';
import { ConfirmDialog } from '../components/Confirm.tsx';

const Copy = ({ value, label }: { value: string; label: string }) => (
  <CopyButton value={value}>
    {({ copied, copy }) => (
      <Button size="xs" variant="light" leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />} onClick={copy} aria-label={copied ? 'Copied' : label}>
        {copied ? 'Copied' : 'Copy'}
      </Button>
    )}
  </CopyButton>
);

/**
 * Trigger settings: the webhook URL, the secret (revealed on demand, regenerated after a warning),
 * whether the secret is required, Standard Webhooks signing, and how deliveries are scheduled.
 * Each switch is saved at once (the graph is not touched); the execution order is saved with the graph.
 */
export function TriggerPanel({
  workflow,
  secret,
  onSecret,
  onChanged,
  executionOrder,
  onExecutionOrder,
}: {
  workflow: Workflow;
  secret: string | null;
  onSecret: (s: string | null) => void;
  /** Trigger settings changed (shown at once, before the server answers; put back if it refuses). */
  onChanged: (w: Pick<Workflow, 'webhook' | 'triggerConfig'>) => void;
  executionOrder: Workflow['executionOrder'];
  onExecutionOrder: (o: Workflow['executionOrder']) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const hook = workflow.webhook;
  const signed = workflow.triggerConfig.signature === 'standard-webhooks';

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
        This workflow starts by its {workflow.triggerType} trigger; only webhook triggers have settings here.
      </Text>
    );

  return (
    <Stack gap="md">
      <Alert color={workflow.active ? 'green' : 'gray'} variant="light" radius="md" p="sm" data-testid="activation-state">
        <Text size="sm" fw={600}>
          {workflow.active ? 'Active: requests to this URL start the workflow.' : 'Inactive: requests to this URL get 404 and start nothing.'}
        </Text>
        <Text size="xs">Switch it with “Active” at the top of the editor.</Text>
      </Alert>
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
        description="Refuse requests (401) whose x-webhook-secret header is not the secret below."
        checked={hook.requireSecret}
        onChange={(e) => {
          const on = e.currentTarget.checked;
          void patch({ requireWebhookSecret: on }, { webhook: { ...hook, requireSecret: on }, triggerConfig: workflow.triggerConfig }, on ? 'Requests now need the secret.' : 'Requests no longer need the secret.');
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
      <Radio.Group
        label="Execution order"
        description="Saved with the workflow."
        value={executionOrder}
        onChange={(v) => onExecutionOrder(v as Workflow['executionOrder'])}
      >
        <Stack gap={6} mt={6}>
          <Radio value="parallel" label="Concurrent" description="Requests run side by side (fastest)." />
          <Radio value="ordered" label="One at a time, in order" description="Each run starts after the previous one finished, in the order requests arrived." />
        </Stack>
      </Radio.Group>
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
