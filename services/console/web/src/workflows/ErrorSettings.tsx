import { Select } from '@mantine/core';
import { useEffect, useState } from 'react';
import type { OnError } from '@flowdesk/contracts/nodes';
import { workspace, type WorkflowItem } from '../workspace.ts';

/** The labels of a node's "on error" (libs/contracts nodes/define.ts ON_ERROR; docs/workflow-engine.md, "Error paths"). */
const ON_ERROR_OPTIONS: { value: OnError; label: string }[] = [
  { value: 'fail', label: 'Fail the run' },
  { value: 'continue', label: 'Continue with the error as output' },
  { value: 'branch', label: 'Follow the error branch' },
];

/** A step's "on error": fail the run (default), continue with {error} as its output, or follow its error handle. */
export function OnErrorSelect({ value, onChange }: { value: OnError | undefined; onChange: (v: OnError) => void }) {
  return (
    <Select
      label="On error"
      description={
        value === 'branch'
          ? 'Connect the step’s error handle (below it) to the steps to run when it fails.'
          : value === 'continue'
            ? 'Later steps read the error as {{nodes.<id>.error}}.'
            : 'The run fails at this step (its error workflow, if set, starts).'
      }
      data={ON_ERROR_OPTIONS}
      value={value ?? 'fail'}
      allowDeselect={false}
      onChange={(v) => v && onChange(v)}
    />
  );
}

/** The workflow's error workflow: another of the user's workflows, started when a run of this one fails. */
export function ErrorWorkflowSelect({ workflowId, value, onChange }: { workflowId: string; value: string | null; onChange: (v: string | null) => void }) {
  const [workflows, setWorkflows] = useState<WorkflowItem[] | null>(null);
  useEffect(() => {
    workspace.listWorkflows().then(setWorkflows, () => setWorkflows([]));
  }, []);
  const data = (workflows ?? [])
    .filter((w) => w.id !== workflowId)
    .map((w) => ({ value: w.id, label: w.triggerType === 'error' ? w.name : `${w.name} (${w.triggerType} trigger)` }));
  return (
    <Select
      label="Error workflow"
      description="Started with {workflow, run, failedNode, error} when a run of this workflow fails. Give it the Error trigger."
      placeholder={workflows ? 'None' : 'Loading…'}
      data={data}
      value={value}
      clearable
      searchable
      onChange={(v) => onChange(v ?? null)}
    />
  );
}
