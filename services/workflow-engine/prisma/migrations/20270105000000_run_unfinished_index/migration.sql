-- The console's pipeline health (GET /api/v1/workflow-runs/health) counts a user's unfinished runs
-- (queued or running) of any age and finds the oldest: a partial index holds only those rows, so the
-- lookup costs what is unfinished now, not the user's whole history of runs.
CREATE INDEX "run_owner_id_unfinished_created_at_idx" ON "engine"."run" ("owner_id", "created_at") WHERE "status" IN ('queued', 'running');
