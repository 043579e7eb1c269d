-- The five trigger types (docs/triggers.md).
-- What started a run (TriggerEvent.source); runs recorded before this column existed were webhooks
-- or reruns (those have started_by set).
ALTER TABLE "engine"."run" ADD COLUMN "trigger_type" TEXT NOT NULL DEFAULT 'webhook';
UPDATE "engine"."run" SET "trigger_type" = 'manual' WHERE "started_by" IS NOT NULL;
ALTER TABLE "engine"."run" ADD CONSTRAINT "run_trigger_type_check" CHECK ("trigger_type" IN ('webhook', 'manual', 'schedule', 'note', 'entity'));

-- record_runs as before, plus "triggerType": set when the row is created, never changed after.
CREATE OR REPLACE FUNCTION "engine".record_runs(batch jsonb) RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE o uuid;
BEGIN
  PERFORM set_config('role', 'flowdesk_app', true);
  FOR o IN SELECT DISTINCT ("e"->>'ownerId')::uuid FROM jsonb_array_elements(batch) AS "e" LOOP
    PERFORM set_config('app.user_id', o::text, true);
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
        trace_id = COALESCE(EXCLUDED.trace_id, "run".trace_id)
      WHERE "run".status IN ('queued', 'running')
      RETURNING "run".workflow_id::text || '/' || "run".event_id;
  END LOOP;
  PERFORM set_config('app.user_id', '', true);
END
$$;

-- Schedules: the next due tick of every active schedule-triggered workflow, kept in step with the
-- definitions (workflow.changed) by every engine replica. A tick is claimed by the one replica whose
-- compare-and-set moves next_tick on (UPDATE ... WHERE next_tick = the due tick), storing the run's
-- trigger event as pending in the same statement; it then publishes it and clears it. One run per
-- tick however many replicas run, and none lost if the claimer dies before publishing.
-- `version` is the definition's: a replayed older workflow.changed event never overwrites a newer
-- state, and a workflow that stops being scheduled keeps its row, disabled, as that version's record.
-- Engine bookkeeping read only by the engine's own login across owners (the scheduler is not acting
-- for a user): no grant to flowdesk_app, so no user-scoped statement can read or change it.
CREATE TABLE "engine"."schedule" (
    "workflow_id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL,
    "missed" TEXT NOT NULL,
    "next_tick" TIMESTAMPTZ(3) NOT NULL,
    "last_tick" TIMESTAMPTZ(3),
    -- A claimed tick's trigger event until it is published (a replica that died in between leaves it
    -- for another to publish after pending_until; the event id is the tick's, so it is one run).
    "pending_event" JSONB,
    "pending_until" TIMESTAMPTZ(3),
    CONSTRAINT "schedule_pkey" PRIMARY KEY ("workflow_id"),
    CONSTRAINT "schedule_missed_check" CHECK ("missed" IN ('run_once', 'skip'))
);
CREATE INDEX "schedule_next_tick_idx" ON "engine"."schedule"("next_tick") WHERE "enabled";
CREATE INDEX "schedule_pending_until_idx" ON "engine"."schedule"("pending_until") WHERE "pending_event" IS NOT NULL;
