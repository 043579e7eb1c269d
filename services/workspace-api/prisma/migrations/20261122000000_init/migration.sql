-- workspace-api: initial schema with row-level security.
-- Written by hand in Prisma's migrations/ format so that `prisma migrate deploy` applies it where the
-- schema engine exists; elsewhere libs/db's runner applies it and records it in _prisma_migrations.

CREATE SCHEMA IF NOT EXISTS "workspace";

-- The role every request runs as. NOLOGIN: a deployment logs in as its own user and is granted this
-- role; requests switch to it with SET LOCAL ROLE, so even a superuser connection (PGlite, a dev
-- Postgres) is subject to the policies below. It never has BYPASSRLS.
DO $$
BEGIN
  CREATE ROLE flowdesk_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
GRANT flowdesk_app TO CURRENT_USER;
GRANT USAGE ON SCHEMA "workspace" TO flowdesk_app;

-- The current user, set per transaction with set_config('app.user_id', $1, true).
-- NULLIF: once set on a connection, an ended transaction leaves '' behind rather than NULL; both mean
-- "nobody", so every policy fails closed on a pooled connection after the request that used it.
CREATE FUNCTION "workspace".current_user_id() RETURNS uuid
  LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('app.user_id', true), '')::uuid $$;
GRANT EXECUTE ON FUNCTION "workspace".current_user_id() TO flowdesk_app;

CREATE TYPE "workspace"."ProjectStatus" AS ENUM ('active', 'archived');
CREATE TYPE "workspace"."TaskStatus" AS ENUM ('todo', 'in_progress', 'done', 'cancelled');
CREATE TYPE "workspace"."TaskPriority" AS ENUM ('none', 'low', 'medium', 'high', 'urgent');
CREATE TYPE "workspace"."TriggerType" AS ENUM ('webhook', 'manual', 'schedule', 'note', 'entity');
CREATE TYPE "workspace"."RunStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'skipped');

CREATE TABLE "workspace"."project" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "color" TEXT,
    "status" "workspace"."ProjectStatus" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "project_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "project_id_owner_id_key" ON "workspace"."project"("id", "owner_id");
CREATE INDEX "project_owner_id_created_at_id_idx" ON "workspace"."project"("owner_id", "created_at" DESC, "id" DESC);

CREATE TABLE "workspace"."task" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "project_id" UUID,
    "title" TEXT NOT NULL,
    "notes" TEXT NOT NULL DEFAULT '',
    "status" "workspace"."TaskStatus" NOT NULL DEFAULT 'todo',
    "priority" "workspace"."TaskPriority" NOT NULL DEFAULT 'none',
    "due_date" DATE,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "task_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "task_owner_id_created_at_id_idx" ON "workspace"."task"("owner_id", "created_at" DESC, "id" DESC);
CREATE INDEX "task_owner_id_project_id_idx" ON "workspace"."task"("owner_id", "project_id");
CREATE INDEX "task_owner_id_due_date_idx" ON "workspace"."task"("owner_id", "due_date");

CREATE TABLE "workspace"."calendar_entry" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "project_id" UUID,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "location" TEXT,
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "all_day" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "calendar_entry_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "calendar_entry_ends_after_start" CHECK ("ends_at" >= "starts_at")
);
CREATE INDEX "calendar_entry_owner_id_starts_at_idx" ON "workspace"."calendar_entry"("owner_id", "starts_at");

CREATE TABLE "workspace"."note" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "project_id" UUID,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "note_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "note_owner_id_created_at_id_idx" ON "workspace"."note"("owner_id", "created_at" DESC, "id" DESC);

CREATE TABLE "workspace"."workflow" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "trigger_type" "workspace"."TriggerType" NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT false,
    "graph" JSONB NOT NULL DEFAULT '{"nodes":[],"edges":[]}',
    "trigger_config" JSONB NOT NULL DEFAULT '{}',
    "webhook_secret_cipher" TEXT,
    "require_webhook_secret" BOOLEAN NOT NULL DEFAULT true,
    "sample_payload" JSONB,
    "sample_payload_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "workflow_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "workflow_id_owner_id_key" ON "workspace"."workflow"("id", "owner_id");
CREATE INDEX "workflow_owner_id_created_at_id_idx" ON "workspace"."workflow"("owner_id", "created_at" DESC, "id" DESC);

CREATE TABLE "workspace"."workflow_run" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL DEFAULT "workspace".current_user_id(),
    "workflow_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "status" "workspace"."RunStatus" NOT NULL DEFAULT 'queued',
    "trigger_payload" JSONB NOT NULL DEFAULT '{}',
    "steps" JSONB NOT NULL DEFAULT '[]',
    "warnings" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "workflow_run_pkey" PRIMARY KEY ("id")
);
-- owner_id leads every unique key of a user table: a uniqueness check ignores row-level security, so
-- a key without the owner would tell a user whether another user's row holds a value.
CREATE UNIQUE INDEX "workflow_run_owner_id_workflow_id_event_id_key" ON "workspace"."workflow_run"("owner_id", "workflow_id", "event_id");
CREATE INDEX "workflow_run_owner_id_workflow_id_created_at_id_idx" ON "workspace"."workflow_run"("owner_id", "workflow_id", "created_at" DESC, "id" DESC);

-- Relations carry owner_id: a row can only point at a row of the same owner. Foreign-key checks run
-- without row-level security, so without this a user could attach rows to another user's project
-- and learn from the error whether an id exists.
ALTER TABLE "workspace"."task" ADD CONSTRAINT "task_project_id_owner_id_fkey"
  FOREIGN KEY ("project_id", "owner_id") REFERENCES "workspace"."project"("id", "owner_id")
  ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "workspace"."calendar_entry" ADD CONSTRAINT "calendar_entry_project_id_owner_id_fkey"
  FOREIGN KEY ("project_id", "owner_id") REFERENCES "workspace"."project"("id", "owner_id")
  ON DELETE SET NULL ("project_id") ON UPDATE CASCADE;
ALTER TABLE "workspace"."note" ADD CONSTRAINT "note_project_id_owner_id_fkey"
  FOREIGN KEY ("project_id", "owner_id") REFERENCES "workspace"."project"("id", "owner_id")
  ON DELETE SET NULL ("project_id") ON UPDATE CASCADE;
ALTER TABLE "workspace"."workflow_run" ADD CONSTRAINT "workflow_run_workflow_id_owner_id_fkey"
  FOREIGN KEY ("workflow_id", "owner_id") REFERENCES "workspace"."workflow"("id", "owner_id")
  ON DELETE CASCADE ON UPDATE CASCADE;

-- Row-level security: FORCE so that the table owner is bound too; one policy per table for every
-- command, USING for what is visible and WITH CHECK so no row can be written under another owner.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['project', 'task', 'calendar_entry', 'note', 'workflow', 'workflow_run'] LOOP
    EXECUTE format('ALTER TABLE "workspace".%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE "workspace".%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY owner_only ON "workspace".%I FOR ALL TO PUBLIC
                      USING (owner_id = "workspace".current_user_id())
                      WITH CHECK (owner_id = "workspace".current_user_id())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON "workspace".%I TO flowdesk_app', t);
  END LOOP;
END
$$;
