-- Durable runs (docs/workflow-engine.md, "Durable runs"): each executed step's outcome is checkpointed
-- while the run goes, so a run whose engine died resumes from the first step without a recorded
-- outcome instead of from the top.

-- How many times an engine claimed the run: 1, plus one for every claim of a run still `running`
-- (its engine died and the event was delivered again). A claim that answers more than 1 is a resume:
-- only then does the engine read the run's checkpoints (none on the hot path).
ALTER TABLE "engine"."run" ADD COLUMN "claims" INTEGER NOT NULL DEFAULT 1;

-- One row per executed step of an unfinished run: the step as recorded (RunStep), the output later
-- nodes read (credential values redacted) and the branch a condition took. Written in batches across
-- runs (engine.record_runs' second argument); deleted by the run's final write, which carries every
-- step in run.steps. Owner-scoped like the runs.
CREATE TABLE "engine"."run_step" (
    "owner_id" UUID NOT NULL DEFAULT "engine".current_user_id(),
    "workflow_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "step" JSONB NOT NULL,
    "output" JSONB,
    "branch" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "run_step_pkey" PRIMARY KEY ("owner_id", "workflow_id", "event_id", "node_id")
);
ALTER TABLE "engine"."run_step" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "engine"."run_step" FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."run_step" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
GRANT SELECT, INSERT, DELETE ON "engine"."run_step" TO flowdesk_app;

-- record_runs with checkpoints: `steps` is a JSON array of {ownerId, workflowId, eventId, nodeId,
-- step, output?, branch?} inserted first (a step already recorded is kept); then the runs as before,
-- plus: a claim of a run still `running` counts in `claims`, and its key comes back prefixed with '+'
-- (a resume); an outcome with "dropSteps": true deletes the run's checkpoints in the same statement.
-- Both extras cost nothing when unused (a run with one side effect never writes a checkpoint).
CREATE FUNCTION "engine".record_runs(batch jsonb, steps jsonb) RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE o uuid;
DECLARE any_steps boolean := jsonb_array_length(steps) > 0;
DECLARE any_drops boolean := batch @> '[{"dropSteps": true}]';
BEGIN
  PERFORM set_config('role', 'flowdesk_app', true);
  FOR o IN SELECT DISTINCT ("e"->>'ownerId')::uuid FROM jsonb_array_elements(batch || steps) AS "e" LOOP
    PERFORM set_config('app.user_id', o::text, true);
    IF any_steps THEN
      INSERT INTO "engine"."run_step" (owner_id, workflow_id, event_id, node_id, step, output, branch)
      SELECT s."ownerId", s."workflowId", s."eventId", s."nodeId", s.step, s.output, s.branch
        FROM jsonb_to_recordset(steps) AS s("ownerId" uuid, "workflowId" uuid, "eventId" text, "nodeId" text, step jsonb, output jsonb, branch text)
       WHERE s."ownerId" = o
      ON CONFLICT DO NOTHING;
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
    IF any_drops THEN
      DELETE FROM "engine"."run_step" AS s
       USING jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, "dropSteps" boolean)
       WHERE r."ownerId" = o AND r."dropSteps" AND r.status IN ('succeeded', 'failed', 'skipped')
         AND s.owner_id = o AND s.workflow_id = r."workflowId" AND s.event_id = r."eventId";
    END IF;
  END LOOP;
  PERFORM set_config('app.user_id', '', true);
END
$$;
GRANT EXECUTE ON FUNCTION "engine".record_runs(jsonb, jsonb) TO flowdesk_app;
