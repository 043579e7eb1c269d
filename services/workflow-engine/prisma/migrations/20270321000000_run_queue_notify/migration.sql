-- Wake-ups for the run queue (docs/workflow-engine.md, "Fairness across owners"): a statement that
-- queues runs (an owner past its in-flight cap on some replica) notifies `flowdesk_run_queue` at its
-- commit, so a replica with room claims them at once; with nothing queued a replica reads the queue
-- only at its safety poll (ENGINE fairness idlePollMs, 10 s), not every second.
CREATE FUNCTION "engine".notify_run_queue() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('flowdesk_run_queue', '');
  RETURN NULL;
END
$fn$;

CREATE TRIGGER run_queue_notify_insert AFTER INSERT ON "engine"."run_queue"
  FOR EACH STATEMENT EXECUTE FUNCTION "engine".notify_run_queue();
