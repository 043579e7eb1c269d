-- The workflow version a run ran (docs/workflow-versions.md): the definition's `definitionVersion`
-- (workflow.changed events, the definitions API), sent by the engine with a run's claim. Null for
-- runs recorded before, for definitions without the field, and for a queued run not claimed yet.
-- A later claim of the same run (a woken run, a run taken over) records the version it continues
-- with; a write without it (an outcome) keeps the stored one.
ALTER TABLE "engine"."run" ADD COLUMN "workflow_version" INTEGER;

-- record_runs takes "workflowVersion": only the run upsert changes, so the function is patched in
-- place (as 20270128000000_run_wake_by_wait does) rather than copied whole again.
DO $migration$
DECLARE
  def text := pg_get_functiondef('"engine".record_runs(jsonb, jsonb)'::regprocedure);
  parts text[][] := ARRAY[
    ARRAY[$a$started_at, finished_at, trace_id, trigger_type)$a$, $b$started_at, finished_at, trace_id, trigger_type, workflow_version)$b$],
    ARRAY[$a$r."traceId", COALESCE(r."triggerType", 'webhook')$a$, $b$r."traceId", COALESCE(r."triggerType", 'webhook'), r."workflowVersion"$b$],
    ARRAY[$a$"traceId" text,
                                            "triggerType" text)$a$, $b$"traceId" text,
                                            "triggerType" text, "workflowVersion" integer)$b$],
    ARRAY[$a$trace_id = COALESCE(EXCLUDED.trace_id, "run".trace_id),$a$, $b$trace_id = COALESCE(EXCLUDED.trace_id, "run".trace_id),
        workflow_version = COALESCE(EXCLUDED.workflow_version, "run".workflow_version),$b$]
  ];
  i int;
BEGIN
  FOR i IN 1 .. array_length(parts, 1) LOOP
    IF position(parts[i][1] IN def) = 0 THEN
      RAISE EXCEPTION 'engine.record_runs: the text to replace was not found: %', parts[i][1];
    END IF;
    def := replace(def, parts[i][1], parts[i][2]);
  END LOOP;
  EXECUTE def;
END
$migration$;
