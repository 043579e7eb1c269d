/**
 * The workflow engine's creates of notes, calendar entries and comments as the owner, each exactly
 * once per idempotency key (routes/engine-as-owner.ts, POST /internal/v1/creates/batch). The key is
 * kept in the row's `idempotency_key` column (migration 20270115000000), unique per owner; it is not
 * part of the API's entities. Row-level security scopes every statement to the owner.
 */
import { HttpError, type CreateCalendarEntry, type CreateComment, type CreateNote, type EngineCreateKind, type TriggerOrigin } from '@flowdesk/contracts';
import type { Tx } from './tx.ts';
import { assertTargetVisible, toComment } from './comments.ts';
import { toCalendarEntry, toNote } from './mappers.ts';

const HOUR = 3_600_000;

/** All-day entries default to the rest of their day; others to one hour. */
function defaultEnd(startsAt: Date, allDay: boolean): Date {
  if (!allDay) return new Date(startsAt.getTime() + HOUR);
  return new Date(Date.UTC(startsAt.getUTCFullYear(), startsAt.getUTCMonth(), startsAt.getUTCDate() + 1));
}

/** The row a CreateCalendarEntry body makes (shared by POST /calendar-entries and the engine's creates). */
export function calendarEntryData(userId: string, b: CreateCalendarEntry) {
  const startsAt = new Date(b.startsAt);
  const allDay = b.allDay ?? false;
  const endsAt = b.endsAt ? new Date(b.endsAt) : defaultEnd(startsAt, allDay);
  if (endsAt < startsAt) throw new HttpError('validation_failed', 'body.endsAt must not be before startsAt');
  return {
    ownerId: userId,
    title: b.title,
    description: b.description ?? '',
    location: b.location ?? null,
    startsAt,
    endsAt,
    allDay,
    projectId: b.projectId ?? null,
  };
}

const TABLE: Record<EngineCreateKind, string> = { note: 'note', calendar_entry: 'calendar_entry', comment: 'comment' };

async function read(tx: Tx, kind: EngineCreateKind, id: string): Promise<Record<string, unknown>> {
  if (kind === 'note') return toNote(await tx.note.findUniqueOrThrow({ where: { id } }));
  if (kind === 'calendar_entry') return toCalendarEntry(await tx.calendarEntry.findUniqueOrThrow({ where: { id } }));
  return toComment(await tx.comment.findUniqueOrThrow({ where: { id } }));
}

async function insert(tx: Tx, userId: string, kind: EngineCreateKind, body: unknown, origin?: TriggerOrigin): Promise<{ id: string }> {
  // Set in the INSERT itself: the change event (announce_entity_change) is made from the inserted row.
  const from = origin ? { originWorkflowId: origin.workflowId, originDepth: origin.depth } : {};
  if (kind === 'note') {
    const b = body as CreateNote;
    return tx.note.create({
      data: {
        ownerId: userId,
        title: b.title,
        content: b.content ?? '',
        projectId: b.projectId ?? null,
        tags: b.tags ?? [],
        pinned: b.pinned ?? false,
        ...from,
      },
      select: { id: true },
    });
  }
  if (kind === 'calendar_entry')
    return tx.calendarEntry.create({ data: { ...calendarEntryData(userId, body as CreateCalendarEntry), ...from }, select: { id: true } });
  const { targetType, targetId, body: text } = body as CreateComment;
  await assertTargetVisible(tx, targetType, targetId);
  const column = targetType === 'task' ? 'taskId' : targetType === 'project' ? 'projectId' : 'noteId';
  return tx.comment.create({ data: { ownerId: userId, targetType, body: text, [column]: targetId }, select: { id: true } });
}

/**
 * Creates the row (body already validated against its kind's create schema), or with a key the owner
 * already used for this kind, answers the row created with it. The key is set in the same transaction
 * as the insert; a concurrent twin fails on the unique index and the caller's retry finds the winner.
 */
export async function createOnce(
  tx: Tx,
  userId: string,
  kind: EngineCreateKind,
  body: unknown,
  key: string | null,
  origin?: TriggerOrigin,
): Promise<Record<string, unknown>> {
  const table = TABLE[kind];
  if (key) {
    const [hit] = await tx.$queryRawUnsafe<{ id: string }[]>(`SELECT id::text AS id FROM workspace.${table} WHERE idempotency_key = $1`, key);
    if (hit) return read(tx, kind, hit.id);
  }
  const { id } = await insert(tx, userId, kind, body, origin);
  if (key) await tx.$executeRawUnsafe(`UPDATE workspace.${table} SET idempotency_key = $1 WHERE id = $2::uuid`, key, id);
  return read(tx, kind, id);
}
