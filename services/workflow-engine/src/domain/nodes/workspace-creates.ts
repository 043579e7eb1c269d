/**
 * Create Note, Create Calendar Entry and Add Comment: side effects as the workflow's owner, each body
 * the public create body of its kind, sent with the step's idempotency key (a re-executed step answers
 * the row it created; workspace-api keeps the key per owner). Batched per owner by the adapter.
 */
import type { EngineCreateKind, NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { NodeHandler } from './node-handler.ts';
import { checkTags, optional, tagList, workspacePort } from './workspace-input.ts';

interface CreateInput {
  body: Record<string, unknown>;
}

const createHandler = <P>(
  kind: EngineCreateKind,
  render: NodeHandler<P, CreateInput>['render'],
  check: (body: Record<string, unknown>) => void,
): NodeHandler<P, CreateInput> => ({
  isAction: true,
  // The key is kept on the row: executed again, the step answers the row it created.
  exactlyOnce: true,
  render,
  mask: (input) => input,
  execute: async (input, ctx) => {
    check(input.body);
    const created = await workspacePort(ctx.ports.workspace).create(ctx.ownerId, kind, input.body, {
      signal: ctx.signal,
      ...(ctx.idempotencyKey ? { idempotencyKey: ctx.idempotencyKey } : {}),
    });
    return { output: created };
  },
});

const required = (what: string, value: unknown) => {
  if (!value) throw new NodeFailedError(`${what} is empty after rendering its variables`);
};

export const createNoteHandler = createHandler<NodeParams<'create_note'>>(
  'note',
  (params, renderer) => {
    const body: Record<string, unknown> = { title: renderer.renderString(params.title).trim().slice(0, 500) };
    const content = optional(renderer, params.content);
    const projectId = optional(renderer, params.projectId);
    const tags = tagList(optional(renderer, params.tags));
    if (content) body.content = content.slice(0, 100_000);
    if (projectId) body.projectId = projectId;
    if (tags.length > 0) body.tags = tags;
    return { body };
  },
  (body) => {
    required('the note title', body.title);
    checkTags(body.tags as string[] | undefined);
  },
);

/** A date alone starts at 00:00 UTC; anything else is sent as rendered (workspace-api checks it). */
const dateTime = (text: string) => (/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00.000Z` : text);

export const createCalendarEntryHandler = createHandler<NodeParams<'create_calendar_entry'>>(
  'calendar_entry',
  (params, renderer) => {
    const body: Record<string, unknown> = {
      title: renderer.renderString(params.title).trim().slice(0, 500),
      startsAt: dateTime(optional(renderer, params.startsAt)),
    };
    const endsAt = optional(renderer, params.endsAt);
    const description = optional(renderer, params.description);
    const location = optional(renderer, params.location);
    const projectId = optional(renderer, params.projectId);
    if (endsAt) body.endsAt = dateTime(endsAt);
    if (params.allDay !== undefined) body.allDay = params.allDay;
    if (description) body.description = description.slice(0, 20_000);
    if (location) body.location = location.slice(0, 500);
    if (projectId) body.projectId = projectId;
    return { body };
  },
  (body) => {
    required('the title', body.title);
    required('the start', body.startsAt);
  },
);

export const addCommentHandler = createHandler<NodeParams<'add_comment'>>(
  'comment',
  (params, renderer) => ({
    body: { targetType: 'task', targetId: optional(renderer, params.taskId), body: renderer.renderString(params.body).trim().slice(0, 10_000) },
  }),
  (body) => {
    required('the task id', body.targetId);
    required('the comment', body.body);
  },
);
