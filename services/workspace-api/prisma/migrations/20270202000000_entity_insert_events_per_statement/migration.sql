-- Inserts announce their change events per statement (docs/triggers.md, "Note and entity"; docs/performance.md,
-- 2026-11-29). The row trigger of 20261226000000_entity_events ran, for every inserted row, its own query for
-- whether the owner has an active workflow listening: ~6 µs a row, a quarter of what inserting a task costs,
-- paid by every row of the engine's Create Task batches even when nobody listens. An AFTER INSERT trigger per
-- statement reads the inserted rows from a transition table and asks once per batch. The events are the same
-- as before: one per inserted row, action "created", in the order the rows were inserted, in the same
-- transaction. Updates and deletes keep the row trigger (they compare a row's before and after).
CREATE FUNCTION "workspace".announce_entity_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text := TG_ARGV[0];
  listening "workspace"."TriggerType" := (CASE WHEN kind = 'note' THEN 'note' ELSE 'entity' END)::"workspace"."TriggerType";
BEGIN
  -- One statement: the owners with a listening workflow are looked up once (nobody listens: nothing inserted).
  INSERT INTO "workspace"."outbox" (topic, key, value)
  SELECT 'workspace.entity.changed.v1',
         n.new_row->>'id',
         jsonb_build_object(
           'eventId', gen_random_uuid(),
           'ownerId', n.owner_id,
           'entity', kind,
           'entityId', n.new_row->'id',
           'action', 'created',
           'changedAt', "workspace".iso_ts(clock_timestamp()),
           'before', 'null'::jsonb,
           'after', "workspace".entity_json(kind, n.new_row),
           'origin', CASE WHEN n.new_row->>'origin_workflow_id' IS NOT NULL
                          THEN jsonb_build_object('workflowId', n.new_row->'origin_workflow_id', 'depth', (n.new_row->>'origin_depth')::int)
                          ELSE 'null'::jsonb END
         )
    FROM (SELECT r.owner_id, to_jsonb(r) AS new_row FROM new_rows r) AS n
   WHERE n.owner_id IN (
     SELECT w.owner_id FROM "workspace"."workflow" w
      WHERE w.owner_id IN (SELECT r.owner_id FROM new_rows r) AND w.active AND w.trigger_type = listening
   );
  RETURN NULL;
END
$$;

DROP TRIGGER "task_announce_change" ON "workspace"."task";
CREATE TRIGGER "task_announce_change" AFTER UPDATE OR DELETE ON "workspace"."task"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('task');
CREATE TRIGGER "task_announce_insert" AFTER INSERT ON "workspace"."task"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "workspace".announce_entity_inserts('task');

DROP TRIGGER "project_announce_change" ON "workspace"."project";
CREATE TRIGGER "project_announce_change" AFTER UPDATE OR DELETE ON "workspace"."project"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('project');
CREATE TRIGGER "project_announce_insert" AFTER INSERT ON "workspace"."project"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "workspace".announce_entity_inserts('project');

DROP TRIGGER "calendar_entry_announce_change" ON "workspace"."calendar_entry";
CREATE TRIGGER "calendar_entry_announce_change" AFTER UPDATE OR DELETE ON "workspace"."calendar_entry"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('calendar_entry');
CREATE TRIGGER "calendar_entry_announce_insert" AFTER INSERT ON "workspace"."calendar_entry"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "workspace".announce_entity_inserts('calendar_entry');

DROP TRIGGER "note_announce_change" ON "workspace"."note";
CREATE TRIGGER "note_announce_change" AFTER UPDATE OR DELETE ON "workspace"."note"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('note');
CREATE TRIGGER "note_announce_insert" AFTER INSERT ON "workspace"."note"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "workspace".announce_entity_inserts('note');
