-- Who started a run by hand ("run again with this payload", docs/workflow-engine.md) and the run it
-- repeats. NULL for runs started by a trigger event. The rerun route inserts the row (queued) as the
-- user; record_runs leaves both columns alone, so the engine's claim and outcome keep them.
ALTER TABLE "engine"."run" ADD COLUMN "started_by" UUID;
ALTER TABLE "engine"."run" ADD COLUMN "rerun_of" UUID;
