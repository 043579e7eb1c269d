import { Handle, Position, useUpdateNodeInternals, type Node, type NodeProps } from '@xyflow/react';
import { Group, Text, ThemeIcon } from '@mantine/core';
import {
  IconAlertCircle,
  IconBox,
  IconBraces,
  IconClock,
  IconGitBranch,
  IconHandClick,
  IconListCheck,
  IconNote,
  IconRefreshDot,
  IconAlertTriangle,
  IconForms,
  IconWebhook,
  IconWorldUpload,
} from '@tabler/icons-react';
import { useEffect, type ReactNode } from 'react';
import type { NodeIcon } from '@flowdesk/contracts/nodes';
import { branchesOfStep, definitionOf, KIND_LABEL, toParams, type NodeData, type StepData, type StepKind, type TriggerData } from './graph.ts';
import { TRIGGER_LABEL, type TriggerType } from './triggers.ts';

export type StepNode = Node<StepData, 'step'>;
export type TriggerNode = Node<TriggerData, 'trigger'>;
export type AnyNode = StepNode | TriggerNode;

/** The icons a node definition may name (libs/contracts/src/nodes/define.ts, NodeIcon). */
const NODE_ICON: Record<NodeIcon, ReactNode> = {
  'world-upload': <IconWorldUpload size={18} />,
  'git-branch': <IconGitBranch size={18} />,
  'list-check': <IconListCheck size={18} />,
  braces: <IconBraces size={18} />,
  box: <IconBox size={18} />,
};
export const kindIcon = (kind: StepKind): ReactNode => NODE_ICON[definitionOf(kind).icon] ?? NODE_ICON.box;
/** The trigger node's icon per trigger type. */
export const TRIGGER_ICON: Record<TriggerType, ReactNode> = {
  webhook: <IconWebhook size={18} />,
  manual: <IconHandClick size={18} />,
  schedule: <IconClock size={18} />,
  note: <IconNote size={18} />,
  entity: <IconRefreshDot size={18} />,
  error: <IconAlertTriangle size={18} />,
  form: <IconForms size={18} />,
};
const triggerTypeOf = (t: string): TriggerType => (t in TRIGGER_LABEL ? (t as TriggerType) : 'webhook');
const colorOf = (d: NodeData): string => (d.kind === 'trigger' ? 'orange' : definitionOf(d.kind).color);

/** One line under the node's name: what it does, at a glance. */
export function summaryOf(d: NodeData): string {
  switch (d.kind) {
    case 'trigger':
      return d.summary ?? (d.triggerType === 'webhook' ? 'On webhook request' : TRIGGER_LABEL[triggerTypeOf(d.triggerType)]);
    default:
      // A form being filled in is not yet valid params (a Switch's rules still empty): a summary that
      // reads a missing param must not take the editor down with it.
      try {
        return definitionOf(d.kind).summary(toParams(d).params as never);
      } catch {
        return definitionOf(d.kind).label;
      }
  }
}

function Card({ data, id }: { data: NodeData; id: string }) {
  const title = data.name || (data.kind === 'trigger' ? TRIGGER_LABEL[triggerTypeOf(data.triggerType)] : KIND_LABEL[data.kind]);
  const disabled = data.kind !== 'trigger' && data.disabled === true;
  return (
    <div className="fd-node" data-error={data.error ? 'true' : 'false'} data-disabled={disabled ? 'true' : 'false'} data-testid={`node-${id}`}>
      <Group gap={10} wrap="nowrap" align="flex-start">
        <ThemeIcon variant="light" color={disabled ? 'gray' : colorOf(data)} radius="md" size={32} aria-hidden>
          {data.kind === 'trigger' ? TRIGGER_ICON[triggerTypeOf(data.triggerType)] : kindIcon(data.kind)}
        </ThemeIcon>
        <div style={{ minWidth: 0, flex: 1 }}>
          <Text size="sm" fw={650} truncate>
            {title}
          </Text>
          <Text size="xs" c="dimmed" truncate>
            {disabled ? `Disabled: ${summaryOf(data)}` : summaryOf(data)}
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
  // The error handle comes and goes with On error: React Flow measures a node's handles once, so a
  // handle added later could not be dragged from (nor an edge drawn to it) until it is told.
  const updateNodeInternals = useUpdateNodeInternals();
  const handles = outputsOf(data).join(',');
  useEffect(() => updateNodeInternals(id), [id, handles, updateNodeInternals]);
  return (
    <>
      <Handle type="target" position={Position.Left} />
      <Card data={data} id={id} />
      <SourceHandles data={data} />
    </>
  );
}

/**
 * The outputs of a step, as its handles name them: its type's branches (true/false, 1–4/default,
 * each/done, resumed/rejected/timeout) or the one plain output (`null`), and `error` when On error
 * follows the error branch.
 */
export function outputsOf(data: StepData): (string | null)[] {
  const branches = branchesOfStep(data);
  const out: (string | null)[] = branches?.length ? [...branches] : [null];
  if (data.onError === 'branch') out.push('error');
  return out;
}

/** One labelled handle per branch of the node's type (a condition's true/false), or one plain handle. */
function SourceHandles({ data }: { data: StepData }) {
  // A Switch offers one handle per rule (and default): the handles follow its rows.
  const branches = branchesOfStep(data);
  // On error "branch": an `error` handle below the node, for the path taken when it fails.
  const errorHandle =
    data.onError === 'branch' ? (
      <Handle type="source" id="error" position={Position.Bottom}>
        <span className="fd-handle-label" style={{ top: 6, right: -18 }}>
          error
        </span>
      </Handle>
    ) : null;
  if (!branches?.length)
    return (
      <>
        <Handle type="source" position={Position.Right} />
        {errorHandle}
      </>
    );
  return (
    <>
      {errorHandle}
      {branches.map((b, i) => (
        <Handle
          key={b}
          type="source"
          id={b}
          position={Position.Right}
          style={{ top: `${branches.length === 2 ? [35, 70][i] : Math.round(((i + 1) * 100) / (branches.length + 1))}%` }}
        >
          <span className="fd-handle-label" style={{ top: -7, right: -(18 + 4 * b.length) }}>
            {b}
          </span>
        </Handle>
      ))}
    </>
  );
}

export const nodeTypes = { step: StepNodeView, trigger: TriggerNodeView };
