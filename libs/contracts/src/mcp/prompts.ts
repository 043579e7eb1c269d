/** MCP prompts: named templates an assistant offers the user, rendered from live workspace data. */
export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}
export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
}

export const PROMPTS: readonly PromptDefinition[] = [
  {
    name: 'plan_my_week',
    title: 'Plan my week',
    description: 'Plan the coming seven days from open tasks, overdue work and calendar entries.',
    arguments: [{ name: 'focus', description: 'What matters most this week (optional), e.g. "ship the launch".', required: false }],
  },
  {
    name: 'daily_standup',
    title: 'Daily standup',
    description: 'Yesterday / today / blockers, from what was completed, what is due and what is overdue.',
    arguments: [{ name: 'date', description: 'The standup day, YYYY-MM-DD (default today, UTC).', required: false }],
  },
  {
    name: 'sprint_retrospective',
    title: 'Sprint retrospective',
    description: 'What went well, what did not, what to change: from the tasks completed and still open in a sprint.',
    arguments: [
      { name: 'sprintStart', description: 'First day of the sprint, YYYY-MM-DD.', required: true },
      { name: 'sprintEnd', description: 'Last day of the sprint, YYYY-MM-DD (default today).', required: false },
      { name: 'projectId', description: 'Limit to one project (optional).', required: false },
    ],
  },
  {
    name: 'project_kickoff',
    title: 'Project kickoff',
    description: 'Kick off a project: goals, scope, first milestones and first tasks, from the project and what it holds so far.',
    arguments: [{ name: 'projectId', description: 'The project to kick off.', required: true }],
  },
];
