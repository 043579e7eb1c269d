-- Parked runs and their timers (docs/workflow-engine.md, "Parking" and "Wait"). A run parked by a
-- step (a Wait node) is `waiting`: its executed steps are checkpoints (engine.run_step, the parked one
-- with status `waiting`) and its wait is one row here. The engine's timer poller claims due rows
-- (compare-and-set on fire_at, a lease) and republishes the run's trigger event with `resume`: the
-- run is claimed again (waiting -> running) and resumes from its checkpoints.
CREATE TABLE "engine"."run_wait" (
    "owner_id" UUID NOT NULL DEFAULT "engine".current_user_id(),
    "workflow_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "run_id" UUID NOT NULL,
    -- The resume URL's id (random), and the SHA-256 (hex) of its secret; null when not resumable.
    "wait_id" UUID NOT NULL,
    "secret_hash" TEXT,
    "node_id" TEXT NOT NULL,
    "resumable" BOOLEAN NOT NULL,
    -- When the poller publishes the wake: the timer (or a resume's timeout); now() once resumed;
    -- now() + lease while a claimed wake is being published; null: only a resume wakes the run.
    "fire_at" TIMESTAMPTZ(3),
    -- Set once, by whichever comes first: a resume (URL, Approve, Reject) or the poller's claim (timer, timeout).
    "resumed_by" TEXT,
    "resumed_at" TIMESTAMPTZ(3),
    "body" JSONB,
    -- The run's trigger event, republished with `resume` to wake it.
    "event" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "run_wait_pkey" PRIMARY KEY ("owner_id", "workflow_id", "event_id")
);
CREATE UNIQUE INDEX "run_wait_wait_id_key" ON "engine"."run_wait"("wait_id");
CREATE INDEX "run_wait_run_id_idx" ON "engine"."run_wait"("run_id");
-- The poller's only read: due timers, oldest first.
CREATE INDEX "run_wait_fire_at_idx" ON "engine"."run_wait"("fire_at") WHERE "fire_at" IS NOT NULL;
-- Written by record_runs (as flowdesk_app, per owner) and the owner's cancel / Approve / Reject;
-- the poller and the public resume URL use the engine's own login (the table's owner, RLS not forced).
ALTER TABLE "engine"."run_wait" ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."run_wait" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON "engine"."run_wait" TO flowdesk_app;

-- record_runs with parking: a write with "wake": true may claim a `waiting` run (waiting -> running,
-- counted as a resume: its key comes back with '+'); a `waiting` write stores its "wait" in
-- engine.run_wait (replacing an earlier one of the run) when the run's row is now waiting.
CREATE OR REPLACE FUNCTION "engine".record_runs(batch jsonb, steps jsonb) RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE o uuid;
DECLARE any_steps boolean := jsonb_array_length(steps) > 0;
DECLARE any_drops boolean := batch @> '[{"dropSteps": true}]';
DECLARE any_wakes boolean := batch @> '[{"wake": true}]';
DECLARE any_waits boolean := batch @> '[{"status": "waiting"}]';
BEGIN
  PERFORM set_config('role', 'flowdesk_app', true);
  FOR o IN SELECT DISTINCT ("e"->>'ownerId')::uuid FROM jsonb_array_elements(batch || steps) AS "e" LOOP
    PERFORM set_config('app.user_id', o::text, true);
    IF any_steps THEN
      INSERT INTO "engine"."run_step" (owner_id, workflow_id, event_id, node_id, step, output, branch)
      SELECT s."ownerId", s."workflowId", s."eventId", s."nodeId", s.step, s.output, s.branch
        FROM jsonb_to_recordset(steps) AS s("ownerId" uuid, "workflowId" uuid, "eventId" text, "nodeId" text, step jsonb, output jsonb, branch text)
       WHERE s."ownerId" = o
      -- A parked step (status waiting) is replaced by its outcome when the run is woken.
      ON CONFLICT (owner_id, workflow_id, event_id, node_id) DO UPDATE SET step = EXCLUDED.step, output = EXCLUDED.output, branch = EXCLUDED.branch
        WHERE "run_step".step->>'status' = 'waiting';
    END IF;
    IF any_wakes THEN
      UPDATE "engine"."run" AS "run" SET status = 'running', claims = "run".claims + 1
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, wake boolean)
       WHERE r."ownerId" = o AND r.wake AND "run".owner_id = o AND "run".workflow_id = r."workflowId" AND "run".event_id = r."eventId"
         AND "run".status = 'waiting';
    END IF;
    RETURN QUERY
      INSERT INTO "engine"."run" AS "run" (owner_id, workflow_id, event_id, status, trigger_payload, steps, warnings, error, started_at, finished_at, trace_id, trigger_type)
      SELECT r."ownerId", r."workflowId", r."eventId", r.status, COALESCE(r.payload, '{}'), COALESCE(r.steps, '[]'), COALESCE(r.warnings, '[]'),
             r.error, r."startedAt", r."finishedAt", r."traceId", COALESCE(r."triggerType", 'webhook')
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, payload jsonb, steps jsonb,
                                            warnings jsonb, error text, "startedAt" timestamptz, "finishedAt" timestamptz, "traceId" text,
                                            "triggerType" text)
       WHERE r."ownerId" = o
      ON CONFLICT (owner_id, workflow_id, event_id) DO UPDATE SET
        status = EXCLUDED.status,
        trigger_payload = CASE WHEN EXCLUDED.trigger_payload = '{}'::jsonb THEN "run".trigger_payload ELSE EXCLUDED.trigger_payload END,
        steps = EXCLUDED.steps,
        warnings = EXCLUDED.warnings,
        error = EXCLUDED.error,
        started_at = COALESCE(EXCLUDED.started_at, "run".started_at),
        finished_at = EXCLUDED.finished_at,
        trace_id = COALESCE(EXCLUDED.trace_id, "run".trace_id),
        claims = "run".claims + CASE WHEN "run".status = 'running' AND EXCLUDED.status = 'running' THEN 1 ELSE 0 END
      WHERE "run".status IN ('queued', 'running')
      RETURNING CASE WHEN "run".claims > 1 AND "run".status = 'running' THEN '+' ELSE '' END || "run".workflow_id::text || '/' || "run".event_id;
    IF any_waits THEN
      INSERT INTO "engine"."run_wait" AS w (owner_id, workflow_id, event_id, run_id, wait_id, secret_hash, node_id, resumable, fire_at, event)
      SELECT o, "run".workflow_id, "run".event_id, "run".id, (r.wait->>'waitId')::uuid, r.wait->>'secretHash', r.wait->>'nodeId',
             (r.wait->>'resumable')::boolean, (r.wait->>'until')::timestamptz, r.wait->'event'
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, wait jsonb)
        JOIN "engine"."run" AS "run" ON "run".owner_id = o AND "run".workflow_id = r."workflowId" AND "run".event_id = r."eventId"
       WHERE r."ownerId" = o AND r.status = 'waiting' AND r.wait IS NOT NULL AND "run".status = 'waiting'
      ON CONFLICT (owner_id, workflow_id, event_id) DO UPDATE SET
        run_id = EXCLUDED.run_id, wait_id = EXCLUDED.wait_id, secret_hash = EXCLUDED.secret_hash, node_id = EXCLUDED.node_id,
        resumable = EXCLUDED.resumable, fire_at = EXCLUDED.fire_at, resumed_by = NULL, resumed_at = NULL, body = NULL,
        event = EXCLUDED.event, created_at = CURRENT_TIMESTAMP;
    END IF;
    IF any_drops THEN
      DELETE FROM "engine"."run_step" AS s
       USING jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, "dropSteps" boolean)
       WHERE r."ownerId" = o AND r."dropSteps" AND r.status IN ('succeeded', 'failed', 'skipped')
         AND s.owner_id = o AND s.workflow_id = r."workflowId" AND s.event_id = r."eventId";
      -- A woken run's wait row stays until its outcome (a second resume answers 409 meanwhile).
      DELETE FROM "engine"."run_wait" AS w
       USING jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, "dropSteps" boolean)
       WHERE r."ownerId" = o AND r."dropSteps" AND r.status IN ('succeeded', 'failed', 'skipped')
         AND w.owner_id = o AND w.workflow_id = r."workflowId" AND w.event_id = r."eventId";
    END IF;
  END LOOP;
  PERFORM set_config('app.user_id', '', true);
END
$$;
-- A woken step's outcome replaces its `waiting` checkpoint (the ON CONFLICT above).
GRANT UPDATE ON "engine"."run_step" TO flowdesk_app;
