import { BaseEdge, EdgeLabelRenderer, getBezierPath, type Edge, type EdgeProps } from '@xyflow/react';
import { ActionIcon, Menu, Tooltip } from '@mantine/core';
import { IconPlus, IconX } from '@tabler/icons-react';
import { createContext, useContext } from 'react';
import { kindIcon } from './canvas-nodes.tsx';
import { KIND_LABEL, STEP_KINDS, type StepKind } from './graph.ts';

/** What an edge's buttons do: the editor's insert-between and delete (pages/WorkflowEditor.tsx). */
export interface EdgeActions {
  insert(edgeId: string, kind: StepKind): void;
  remove(edgeId: string): void;
}
export const EdgeActionsContext = createContext<EdgeActions | null>(null);

/**
 * An edge with a "+" at its middle that inserts a step between its two ends, and (when the edge is
 * selected) a button that deletes it; Delete / Backspace delete a selected edge too.
 */
export function StepEdge(props: EdgeProps<Edge>) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, selected, markerEnd, style, source, target } = props;
  const actions = useContext(EdgeActionsContext);
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  const between = `${source} and ${target}`;
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={{ ...style, ...(selected ? { stroke: 'var(--mantine-color-indigo-6)' } : {}) }} />
      {actions && (
        <EdgeLabelRenderer>
          <div className="fd-edge-tools nodrag nopan" style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}>
            <Menu position="bottom" withinPortal>
              <Menu.Target>
                <Tooltip label="Insert a step here">
                  <ActionIcon size="sm" radius="xl" variant="default" aria-label={`Insert a step between ${between}`}>
                    <IconPlus size={14} />
                  </ActionIcon>
                </Tooltip>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>Between {between}</Menu.Label>
                {STEP_KINDS.map((k) => (
                  <Menu.Item key={k} leftSection={kindIcon(k)} onClick={() => actions.insert(id, k)}>
                    {KIND_LABEL[k]}
                  </Menu.Item>
                ))}
              </Menu.Dropdown>
            </Menu>
            {selected && (
              <Tooltip label="Delete connection (Delete key)">
                <ActionIcon
                  size="sm"
                  radius="xl"
                  color="red"
                  variant="filled"
                  aria-label={`Delete the connection between ${between}`}
                  onClick={() => actions.remove(id)}
                >
                  <IconX size={14} />
                </ActionIcon>
              </Tooltip>
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const edgeTypes = { step: StepEdge };
