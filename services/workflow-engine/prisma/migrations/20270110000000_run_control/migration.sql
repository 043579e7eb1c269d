-- Run control (docs/workflow-engine.md, "Cancelling a run" and "Run history retention").
-- Two more statuses: `cancelled` (a person stopped the run while queued, running or waiting) and
-- `waiting` (a run parked until a timer or a resume: durable runs). record_runs still only changes
-- queued and running rows, so a cancelled run is never taken over by a late claim or outcome.
ALTER TABLE "engine"."run" DROP CONSTRAINT "run_status_check";
ALTER TABLE "engine"."run" ADD CONSTRAINT "run_status_check"
  CHECK ("status" IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'cancelled'));

-- Housekeeping across owners, as this role only: the retention timer deletes finished runs, and a
-- replica asks which of the runs it is executing were cancelled (on another replica's API). It reads
-- the columns those decide by and deletes runs; nothing else, no other table.
DO $$
BEGIN
  CREATE ROLE flowdesk_run_keeper NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
GRANT flowdesk_run_keeper TO CURRENT_USER;
GRANT USAGE ON SCHEMA "engine" TO flowdesk_run_keeper;
GRANT SELECT ("id", "owner_id", "workflow_id", "event_id", "status", "created_at") ON "engine"."run" TO flowdesk_run_keeper;
GRANT DELETE ON "engine"."run" TO flowdesk_run_keeper;
CREATE POLICY run_keeper ON "engine"."run" FOR ALL TO flowdesk_run_keeper USING (true);

-- Runs of error workflows (trigger type `error`, started when another workflow's run failed).
ALTER TABLE "engine"."run" DROP CONSTRAINT "run_trigger_type_check";
ALTER TABLE "engine"."run" ADD CONSTRAINT "run_trigger_type_check" CHECK ("trigger_type" IN ('webhook', 'manual', 'schedule', 'note', 'entity', 'error'));
