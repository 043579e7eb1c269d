import Type, { type Static } from 'typebox';
import { DateTime, StringEnum, Uuid } from '../common.ts';

const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour' });
export const Weekday = StringEnum(['monday', 'sunday', 'saturday']);

/** The user's profile and preferences; defaults until the user changes something. */
export const UserProfile = Type.Object(
  {
    userId: Uuid,
    displayName: Type.Union([Type.String(), Type.Null()]),
    /** IANA time zone, e.g. Europe/Berlin. */
    timezone: Type.String(),
    weekStartsOn: Weekday,
    workdayStart: Clock,
    workdayEnd: Clock,
    /** Where new tasks go when no project is named. */
    defaultProjectId: Type.Union([Uuid, Type.Null()]),
    updatedAt: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'UserProfile' },
);
export type UserProfile = Static<typeof UserProfile>;

export const UpdateUserProfile = Type.Object(
  {
    displayName: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' })),
    weekStartsOn: Type.Optional(Weekday),
    workdayStart: Type.Optional(Clock),
    workdayEnd: Type.Optional(Clock),
    defaultProjectId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserProfile = Static<typeof UpdateUserProfile>;
