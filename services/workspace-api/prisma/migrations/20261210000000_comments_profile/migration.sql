-- workspace-api: comments on tasks, projects and notes, and the user's profile and preferences
-- (the MCP catalogue's comments/activity and profile domains). Same rules as the init migration:
-- owner_id on every row, owner-led keys, composite foreign keys, ENABLE + FORCE row-level security.

CREATE TYPE "workspace"."CommentTarget" AS ENUM ('task', 'project', 'note');

-- Composite keys the new foreign keys point at (project already has one).
CREATE UNIQUE INDEX "task_id_owner_id_key" ON "workspace"."task"("id", "owner_id");
CREATE UNIQUE INDEX "note_id_owner_id_key" ON "workspace"."note"("id", "owner_id");

-- One column per kind of target rather than a polymorphic id, so each can carry a composite foreign
-- key (a comment can only be attached to a row of the same owner) and cascade with its target.
CREATE TABLE "workspace"."comment" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "target_type" "workspace"."CommentTarget" NOT NULL,
    "task_id" UUID,
    "project_id" UUID,
    "note_id" UUID,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "comment_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "comment_one_target" CHECK (
      ("target_type" = 'task' AND "task_id" IS NOT NULL AND "project_id" IS NULL AND "note_id" IS NULL) OR
      ("target_type" = 'project' AND "project_id" IS NOT NULL AND "task_id" IS NULL AND "note_id" IS NULL) OR
      ("target_type" = 'note' AND "note_id" IS NOT NULL AND "task_id" IS NULL AND "project_id" IS NULL))
);
CREATE INDEX "comment_owner_id_created_at_id_idx" ON "workspace"."comment"("owner_id", "created_at" DESC, "id" DESC);
CREATE INDEX "comment_owner_id_task_id_idx" ON "workspace"."comment"("owner_id", "task_id");
CREATE INDEX "comment_owner_id_project_id_idx" ON "workspace"."comment"("owner_id", "project_id");
CREATE INDEX "comment_owner_id_note_id_idx" ON "workspace"."comment"("owner_id", "note_id");

ALTER TABLE "workspace"."comment" ADD CONSTRAINT "comment_task_id_owner_id_fkey"
  FOREIGN KEY ("task_id", "owner_id") REFERENCES "workspace"."task"("id", "owner_id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "workspace"."comment" ADD CONSTRAINT "comment_project_id_owner_id_fkey"
  FOREIGN KEY ("project_id", "owner_id") REFERENCES "workspace"."project"("id", "owner_id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "workspace"."comment" ADD CONSTRAINT "comment_note_id_owner_id_fkey"
  FOREIGN KEY ("note_id", "owner_id") REFERENCES "workspace"."note"("id", "owner_id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TYPE "workspace"."Weekday" AS ENUM ('monday', 'sunday', 'saturday');

-- One row per user (the owner-led unique key), created on the first change.
CREATE TABLE "workspace"."user_profile" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "display_name" TEXT,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "week_starts_on" "workspace"."Weekday" NOT NULL DEFAULT 'monday',
    "workday_start" TEXT NOT NULL DEFAULT '09:00',
    "workday_end" TEXT NOT NULL DEFAULT '17:00',
    "default_project_id" UUID,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "user_profile_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "user_profile_owner_id_key" ON "workspace"."user_profile"("owner_id");
ALTER TABLE "workspace"."user_profile" ADD CONSTRAINT "user_profile_default_project_id_owner_id_fkey"
  FOREIGN KEY ("default_project_id", "owner_id") REFERENCES "workspace"."project"("id", "owner_id")
  ON DELETE SET NULL ("default_project_id") ON UPDATE CASCADE;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['comment', 'user_profile'] LOOP
    EXECUTE format('ALTER TABLE "workspace".%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE "workspace".%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY owner_only ON "workspace".%I FOR ALL TO PUBLIC
                      USING (owner_id = "workspace".current_user_id())
                      WITH CHECK (owner_id = "workspace".current_user_id())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON "workspace".%I TO flowdesk_app', t);
  END LOOP;
END
$$;
