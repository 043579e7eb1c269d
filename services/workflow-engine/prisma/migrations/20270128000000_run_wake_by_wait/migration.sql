-- A woken run's claim (record_runs, "wake": true) finds its row through its wait: engine.run_wait's
-- primary key (owner, workflow, event) gives the run's id, and the run is updated by its primary key.
-- The statement it replaces joined engine.run on (owner, workflow, event) directly, and the planner
-- could pick the (owner, workflow, created_at) index for it (the two cost the same on fresh
-- statistics) and read every run of the workflow per woken run: with 10,000 runs of one workflow
-- woken together, each claim statement took ~280 ms (docs/performance.md, bench:wait). A run being
-- woken always has its wait row: it is deleted only with the run's outcome or a cancel, neither of
-- which leaves the run `waiting`.
-- Only that statement changes, so the function is patched in place rather than copied whole again.
DO $migration$
DECLARE
  def text := pg_get_functiondef('"engine".record_runs(jsonb, jsonb)'::regprocedure);
  old_stmt text := $old$
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, wake boolean)
       WHERE r."ownerId" = o AND r.wake AND "run".owner_id = o AND "run".workflow_id = r."workflowId" AND "run".event_id = r."eventId"
         AND "run".status = 'waiting';$old$;
  new_stmt text := $new$
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, wake boolean)
        JOIN "engine"."run_wait" AS w ON w.owner_id = o AND w.workflow_id = r."workflowId" AND w.event_id = r."eventId"
       WHERE r."ownerId" = o AND r.wake AND "run".id = w.run_id AND "run".owner_id = o
         AND "run".status = 'waiting';$new$;
BEGIN
  IF position(old_stmt IN def) = 0 THEN
    RAISE EXCEPTION 'engine.record_runs: the wake statement to replace was not found';
  END IF;
  EXECUTE replace(def, old_stmt, new_stmt);
END
$migration$;
