-- The W3C trace id of the run's trace (docs/observability.md): the webhook's request, its bus event
-- and the run are one trace, so an operator goes from a run to its spans. NULL when tracing is off.
ALTER TABLE "engine"."run" ADD COLUMN "trace_id" TEXT;

-- record_runs as before, plus "traceId": set by the claim, kept by later writes that carry none.
CREATE OR REPLACE FUNCTION "engine".record_runs(batch jsonb) RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE o uuid;
BEGIN
  PERFORM set_config('role', 'flowdesk_app', true);
  FOR o IN SELECT DISTINCT ("e"->>'ownerId')::uuid FROM jsonb_array_elements(batch) AS "e" LOOP
    PERFORM set_config('app.user_id', o::text, true);
    RETURN QUERY
      INSERT INTO "engine"."run" AS "run" (owner_id, workflow_id, event_id, status, trigger_payload, steps, warnings, error, started_at, finished_at, trace_id)
      SELECT r."ownerId", r."workflowId", r."eventId", r.status, COALESCE(r.payload, '{}'), COALESCE(r.steps, '[]'), COALESCE(r.warnings, '[]'),
             r.error, r."startedAt", r."finishedAt", r."traceId"
        FROM jsonb_to_recordset(batch) AS r("ownerId" uuid, "workflowId" uuid, "eventId" text, status text, payload jsonb, steps jsonb,
                                            warnings jsonb, error text, "startedAt" timestamptz, "finishedAt" timestamptz, "traceId" text)
       WHERE r."ownerId" = o
      ON CONFLICT (owner_id, workflow_id, event_id) DO UPDATE SET
        status = EXCLUDED.status,
        trigger_payload = CASE WHEN EXCLUDED.trigger_payload = '{}'::jsonb THEN "run".trigger_payload ELSE EXCLUDED.trigger_payload END,
        steps = EXCLUDED.steps,
        warnings = EXCLUDED.warnings,
        error = EXCLUDED.error,
        started_at = COALESCE(EXCLUDED.started_at, "run".started_at),
        finished_at = EXCLUDED.finished_at,
        trace_id = COALESCE(EXCLUDED.trace_id, "run".trace_id)
      WHERE "run".status IN ('queued', 'running')
      RETURNING "run".workflow_id::text || '/' || "run".event_id;
  END LOOP;
  PERFORM set_config('app.user_id', '', true);
END
$$;
