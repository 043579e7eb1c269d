-- workflow-engine: the engine owns execution data (runs and their node steps) in its own schema.
-- Written by hand in Prisma's migrations/ format, applied by libs/db migrate() (docs/data-and-rls.md).
-- Row-level security as everywhere: every row has owner_id, reads and writes run as flowdesk_app with
-- app.user_id set to the owner, so no user sees or writes another's runs.

CREATE SCHEMA IF NOT EXISTS "engine";

-- The role every user-scoped statement runs as (created here too: the engine's schema may live in a
-- database of its own).
DO $$
BEGIN
  CREATE ROLE flowdesk_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
GRANT flowdesk_app TO CURRENT_USER;
GRANT USAGE ON SCHEMA "engine" TO flowdesk_app;

-- NULLIF: an ended transaction leaves '' behind on the connection; both mean "nobody" (fail closed).
CREATE FUNCTION "engine".current_user_id() RETURNS uuid
  LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('app.user_id', true), '')::uuid $$;
GRANT EXECUTE ON FUNCTION "engine".current_user_id() TO flowdesk_app;

CREATE TABLE "engine"."run" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_id" UUID NOT NULL DEFAULT "engine".current_user_id(),
    "workflow_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "trigger_payload" JSONB NOT NULL DEFAULT '{}',
    -- The per-node steps of the run, in execution order (libs/contracts RunStep).
    "steps" JSONB NOT NULL DEFAULT '[]',
    "warnings" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "run_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "run_status_check" CHECK ("status" IN ('queued', 'running', 'succeeded', 'failed', 'skipped'))
);
-- owner_id leads every unique key: a uniqueness check ignores row-level security.
-- One run per trigger event: the key that makes at-least-once delivery give exactly one run.
CREATE UNIQUE INDEX "run_owner_id_workflow_id_event_id_key" ON "engine"."run"("owner_id", "workflow_id", "event_id");
CREATE INDEX "run_owner_id_workflow_id_created_at_id_idx" ON "engine"."run"("owner_id", "workflow_id", "created_at" DESC, "id" DESC);
CREATE INDEX "run_owner_id_created_at_id_idx" ON "engine"."run"("owner_id", "created_at" DESC, "id" DESC);

ALTER TABLE "engine"."run" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "engine"."run" FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."run" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON "engine"."run" TO flowdesk_app;

-- The engine's batched write: runs of many owners in one statement (one round trip, one commit).
-- `batch` is a JSON array of {ownerId, workflowId, eventId, status, payload?, steps?, warnings?,
-- error?, startedAt?, finishedAt?}. For each owner in turn it sets app.user_id to that owner and
-- upserts that owner's runs as flowdesk_app, so row-level security checks every row exactly as for a
-- user's request. A finished run is never changed again (the WHERE of DO UPDATE). Returns the
-- "<workflowId>/<eventId>" of every row written: a claim (status running) that is not returned
-- belongs to a run that already finished, and the engine must not execute the event again.
-- SECURITY INVOKER (the default): the role switch is transaction-local and ends with the statement's
-- transaction, so a pooled connection never keeps the role or the owner.
CREATE FUNCTION "engine".record_runs(batch jsonb) RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE o uuid;
BEGIN
  PERFORM set_config('role', 'flowdesk_app', true);
  FOR o IN SELECT DISTINCT ("e"->>'ownerId')::uuid FROM jsonb_array_elements(batch) AS "e" LOOP
    PERFORM set_config('app.user_id', o::text, true);
    RETURN QUERY
      INSERT INTO "engine"."run" AS "run" (owner_id, workflow_id, event_id, status, trigger_payload, steps, warnings, error, started_at, finished_at)
      SELECT r."ownerId", r."workflowId", r."eventId", r.status, COALESCE(r.payload, '{}'), COALESCE(r.steps, '[]'), COALESCE(r.warnings, '[]'),
             r.error, r."startedAt", r."finishedAt"
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, payload jsonb, steps jsonb,
                                            warnings jsonb, error text, "startedAt" timestamptz, "finishedAt" timestamptz)
       WHERE r."ownerId" = o
      ON CONFLICT (owner_id, workflow_id, event_id) DO UPDATE SET
        status = EXCLUDED.status,
        trigger_payload = CASE WHEN EXCLUDED.trigger_payload = '{}'::jsonb THEN "run".trigger_payload ELSE EXCLUDED.trigger_payload END,
        steps = EXCLUDED.steps,
        warnings = EXCLUDED.warnings,
        error = EXCLUDED.error,
        started_at = COALESCE(EXCLUDED.started_at, "run".started_at),
        finished_at = EXCLUDED.finished_at
      WHERE "run".status IN ('queued', 'running')
      RETURNING "run".workflow_id::text || '/' || "run".event_id;
  END LOOP;
  PERFORM set_config('app.user_id', '', true);
END
$$;
GRANT EXECUTE ON FUNCTION "engine".record_runs(jsonb) TO flowdesk_app;
