import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, SearchText, StringEnum, Uuid } from '../common.ts';

export const ProjectStatus = StringEnum(['active', 'archived']);
export const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'Hex colour, #rrggbb' });

export const Project = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    color: Type.Union([Color, Type.Null()]),
    status: ProjectStatus,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Project' },
);
export type Project = Static<typeof Project>;

export const ProjectWithCounts = Type.Intersect([
  Project,
  Type.Object({ taskCounts: Type.Object({ open: Type.Integer(), done: Type.Integer(), total: Type.Integer() }) }),
]);
export type ProjectWithCounts = Static<typeof ProjectWithCounts>;

export const CreateProject = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    color: Type.Optional(Type.Union([Color, Type.Null()])),
    status: Type.Optional(ProjectStatus),
  },
  { additionalProperties: false },
);
export type CreateProject = Static<typeof CreateProject>;

export const UpdateProject = Type.Partial(CreateProject, { additionalProperties: false, minProperties: 1 });
export type UpdateProject = Static<typeof UpdateProject>;

export const ListProjectsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(ProjectStatus), q: Type.Optional(SearchText) },
  { additionalProperties: false },
);
export type ListProjectsQuery = Static<typeof ListProjectsQuery>;
