-- Wake-ups for the engine's timers (docs/workflow-engine.md, "Parking"; docs/triggers.md): every
-- statement that sets a wait's fire_at (a park, a resume, a claim's lease) or a schedule's next tick
-- or pending lease notifies, at its commit, the earliest of the times it wrote, as epoch milliseconds:
-- `flowdesk_wait` for engine.run_wait, `flowdesk_schedule` for engine.schedule. Each replica sleeps
-- until its next due time (read after each round) and re-plans when a notification names an earlier
-- one, so an idle engine runs no statement until something is due (a slow safety poll aside).
-- Statement-level triggers with transition tables: one notification per statement, none for a
-- statement that wrote no time (a claim that found nothing, a wake marked done). Postgres allows a
-- transition table only on a trigger of one event, so INSERT and UPDATE have a trigger each.
CREATE FUNCTION "engine".notify_wake() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  earliest timestamptz;
BEGIN
  IF TG_TABLE_NAME = 'run_wait' THEN
    SELECT min(fire_at) INTO earliest FROM new_rows;
    IF earliest IS NOT NULL THEN
      PERFORM pg_notify('flowdesk_wait', floor(extract(epoch FROM earliest) * 1000)::bigint::text);
    END IF;
  ELSE
    SELECT least(min(next_tick) FILTER (WHERE enabled AND pending_event IS NULL),
                 min(pending_until) FILTER (WHERE pending_event IS NOT NULL))
      INTO earliest FROM new_rows;
    IF earliest IS NOT NULL THEN
      PERFORM pg_notify('flowdesk_schedule', floor(extract(epoch FROM earliest) * 1000)::bigint::text);
    END IF;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER run_wait_notify_insert AFTER INSERT ON "engine"."run_wait"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "engine".notify_wake();
CREATE TRIGGER run_wait_notify_update AFTER UPDATE ON "engine"."run_wait"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "engine".notify_wake();
CREATE TRIGGER schedule_notify_insert AFTER INSERT ON "engine"."schedule"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "engine".notify_wake();
CREATE TRIGGER schedule_notify_update AFTER UPDATE ON "engine"."schedule"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "engine".notify_wake();
