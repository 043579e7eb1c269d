import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

export const createCalendarEntry = defineNode({
  type: 'create_calendar_entry',
  action: true,
  label: 'Create Calendar Entry',
  description: "Creates a calendar entry as the workflow's owner (exactly once per run step).",
  idPrefix: 'event',
  icon: 'box',
  color: 'teal',
  params: Type.Object(
    {
      title: Templated(500),
      startsAt: Templated(200),
      endsAt: Type.Optional(Templated(200)),
      allDay: Type.Optional(Type.Boolean()),
      description: Type.Optional(Templated(20_000)),
      location: Type.Optional(Templated(500)),
      projectId: Type.Optional(Templated(200)),
    },
    { additionalProperties: false },
  ),
  fields: {
    title: { label: 'Title', template: true, placeholder: 'Meeting with {{trigger.customer.name}}' },
    startsAt: {
      label: 'Starts at',
      template: true,
      trim: true,
      placeholder: '2026-12-01T09:00:00Z',
      description: 'An ISO date-time (a date alone: 00:00 UTC).',
    },
    endsAt: { label: 'Ends at', template: true, trim: true, description: 'Default: one hour later (all-day: the end of the day).' },
    allDay: { label: 'All day', default: false, description: 'Off (default): at the times given.' },
    description: { label: 'Description', template: true, multiline: true },
    location: { label: 'Location', template: true },
    projectId: { label: 'Project', widget: 'project' },
  },
  output: 'The created entry: `{{nodes.<id>.id}}`, `{{nodes.<id>.startsAt}}`, …',
  summary: (p) => p.title || '(no title yet)',
});
