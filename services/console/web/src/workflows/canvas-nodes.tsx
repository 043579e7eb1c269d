import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { Group, Text, ThemeIcon } from '@mantine/core';
import {
  IconAlertCircle,
  IconClock,
  IconGitBranch,
  IconHandClick,
  IconListCheck,
  IconNote,
  IconRefreshDot,
  IconWebhook,
  IconWorldUpload,
} from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { KIND_LABEL, type NodeData, type StepData, type TriggerData } from './graph.ts';
import { TRIGGER_LABEL, type TriggerType } from './triggers.ts';

export type StepNode = Node<StepData, 'step'>;
export type TriggerNode = Node<TriggerData, 'trigger'>;
export type AnyNode = StepNode | TriggerNode;

export const KIND_ICON: Record<NodeData['kind'], ReactNode> = {
  trigger: <IconWebhook size={18} />,
  http_request: <IconWorldUpload size={18} />,
  condition: <IconGitBranch size={18} />,
  create_task: <IconListCheck size={18} />,
};
/** The trigger node's icon per trigger type. */
export const TRIGGER_ICON: Record<TriggerType, ReactNode> = {
  webhook: <IconWebhook size={18} />,
  manual: <IconHandClick size={18} />,
  schedule: <IconClock size={18} />,
  note: <IconNote size={18} />,
  entity: <IconRefreshDot size={18} />,
};
const triggerTypeOf = (t: string): TriggerType => (t in TRIGGER_LABEL ? (t as TriggerType) : 'webhook');
const KIND_COLOR: Record<NodeData['kind'], string> = { trigger: 'orange', http_request: 'blue', condition: 'grape', create_task: 'teal' };

/** One line under the node's name: what it does, at a glance. */
export function summaryOf(d: NodeData): string {
  switch (d.kind) {
    case 'trigger':
      return d.summary ?? (d.triggerType === 'webhook' ? 'On webhook request' : TRIGGER_LABEL[triggerTypeOf(d.triggerType)]);
    case 'http_request':
      return `${d.form.method} ${d.form.url || '(no URL yet)'}`;
    case 'condition':
      return d.form.left ? `${d.form.left} ${d.form.operator.replace('_', ' ')} ${d.form.right}`.trim() : 'Set what to check';
    case 'create_task':
      return d.form.title || '(no title yet)';
  }
}

function Card({ data, id }: { data: NodeData; id: string }) {
  const title = data.name || (data.kind === 'trigger' ? TRIGGER_LABEL[triggerTypeOf(data.triggerType)] : KIND_LABEL[data.kind]);
  return (
    <div className="fd-node" data-error={data.error ? 'true' : 'false'} data-testid={`node-${id}`}>
      <Group gap={10} wrap="nowrap" align="flex-start">
        <ThemeIcon variant="light" color={KIND_COLOR[data.kind]} radius="md" size={32} aria-hidden>
          {data.kind === 'trigger' ? TRIGGER_ICON[triggerTypeOf(data.triggerType)] : KIND_ICON[data.kind]}
        </ThemeIcon>
        <div style={{ minWidth: 0, flex: 1 }}>
          <Text size="sm" fw={650} truncate>
            {title}
          </Text>
          <Text size="xs" c="dimmed" truncate>
            {summaryOf(data)}
          </Text>
          <Text size="xs" c="dimmed" ff="monospace">
            {id}
          </Text>
        </div>
      </Group>
      {data.error && (
        <Group gap={4} mt={6} wrap="nowrap" align="flex-start" c="red.8" role="alert" aria-label={`Error on ${title}`}>
          <IconAlertCircle size={14} style={{ flexShrink: 0, marginTop: 2 }} aria-hidden />
          <Text size="xs" fw={550} data-testid={`node-error-${id}`}>
            {data.error}
          </Text>
        </Group>
      )}
    </div>
  );
}

export function TriggerNodeView({ id, data }: NodeProps<TriggerNode>) {
  return (
    <>
      <Card data={data} id={id} />
      <Handle type="source" position={Position.Right} />
    </>
  );
}

export function StepNodeView({ id, data }: NodeProps<StepNode>) {
  return (
    <>
      <Handle type="target" position={Position.Left} />
      <Card data={data} id={id} />
      {data.kind === 'condition' ? (
        <>
          <Handle type="source" id="true" position={Position.Right} style={{ top: '35%' }}>
            <span className="fd-handle-label" style={{ top: -7, right: -34 }}>
              true
            </span>
          </Handle>
          <Handle type="source" id="false" position={Position.Right} style={{ top: '70%' }}>
            <span className="fd-handle-label" style={{ top: -7, right: -38 }}>
              false
            </span>
          </Handle>
        </>
      ) : (
        <Handle type="source" position={Position.Right} />
      )}
    </>
  );
}

export const nodeTypes = { step: StepNodeView, trigger: TriggerNodeView };
