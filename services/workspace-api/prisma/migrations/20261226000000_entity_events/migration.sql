-- Entity change events for the note and entity triggers (docs/triggers.md). A row trigger on each
-- table appends a workspace.entity.changed.v1 event to the outbox in the change's own transaction:
-- the event exists iff the change committed (a rolled-back change leaves none), whichever route,
-- tool or batch made it, with no table polling. Only while the owner has an active workflow of the
-- matching trigger type: nothing is written for owners that have none (the hot path stays as it was).

-- A task made by a workflow's Create Task node keeps the run's origin (the loop guard): the workflow
-- and how many workflow-made changes led to it. Not part of the API's Task.
ALTER TABLE "workspace"."task" ADD COLUMN "origin_workflow_id" UUID;
ALTER TABLE "workspace"."task" ADD COLUMN "origin_depth" SMALLINT;

-- The trigger's "does this owner have an active note/entity workflow" probe.
CREATE INDEX "workflow_owner_id_change_triggers_idx" ON "workspace"."workflow"("owner_id", "trigger_type")
  WHERE "active" AND "trigger_type" IN ('note', 'entity');

-- The entity as the REST API shows it (libs/contracts entities; domain/mappers.ts), camelCase.
CREATE FUNCTION "workspace".iso_ts(t timestamptz) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

CREATE FUNCTION "workspace".entity_json(kind text, r jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE kind
    WHEN 'task' THEN jsonb_build_object(
      'id', r->'id', 'title', r->'title', 'projectId', r->'project_id', 'dueDate', r->'due_date', 'notes', r->'notes',
      'status', r->'status', 'priority', r->'priority', 'tags', COALESCE(r->'tags', '[]'::jsonb),
      'completedAt', to_jsonb("workspace".iso_ts((r->>'completed_at')::timestamptz)),
      'createdAt', to_jsonb("workspace".iso_ts((r->>'created_at')::timestamptz)), 'updatedAt', to_jsonb("workspace".iso_ts((r->>'updated_at')::timestamptz)))
    WHEN 'project' THEN jsonb_build_object(
      'id', r->'id', 'name', r->'name', 'description', r->'description', 'color', r->'color', 'status', r->'status',
      'createdAt', to_jsonb("workspace".iso_ts((r->>'created_at')::timestamptz)), 'updatedAt', to_jsonb("workspace".iso_ts((r->>'updated_at')::timestamptz)))
    WHEN 'calendar_entry' THEN jsonb_build_object(
      'id', r->'id', 'title', r->'title', 'description', r->'description', 'location', r->'location',
      'startsAt', to_jsonb("workspace".iso_ts((r->>'starts_at')::timestamptz)), 'endsAt', to_jsonb("workspace".iso_ts((r->>'ends_at')::timestamptz)),
      'allDay', r->'all_day', 'projectId', r->'project_id',
      'createdAt', to_jsonb("workspace".iso_ts((r->>'created_at')::timestamptz)), 'updatedAt', to_jsonb("workspace".iso_ts((r->>'updated_at')::timestamptz)))
    WHEN 'note' THEN jsonb_build_object(
      'id', r->'id', 'title', r->'title', 'content', r->'content', 'projectId', r->'project_id', 'tags', COALESCE(r->'tags', '[]'::jsonb),
      'pinned', r->'pinned',
      'createdAt', to_jsonb("workspace".iso_ts((r->>'created_at')::timestamptz)), 'updatedAt', to_jsonb("workspace".iso_ts((r->>'updated_at')::timestamptz)))
  END
$$;

-- SECURITY INVOKER (the default): it runs as the statement's role (flowdesk_app with app.user_id set
-- for user requests), so the probe sees only the owner's own workflows, as row-level security says.
CREATE FUNCTION "workspace".announce_entity_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text := TG_ARGV[0];
  owner uuid;
  old_row jsonb;
  new_row jsonb;
  action text;
  origin jsonb := 'null'::jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN owner := OLD.owner_id; ELSE owner := NEW.owner_id; END IF;
  IF NOT EXISTS (
    SELECT 1 FROM "workspace"."workflow" w
     WHERE w.owner_id = owner AND w.active
       AND w.trigger_type = (CASE WHEN kind = 'note' THEN 'note' ELSE 'entity' END)::"workspace"."TriggerType"
  ) THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
  IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
  IF TG_OP = 'INSERT' THEN
    action := 'created';
    -- Through the jsonb copy: PL/pgSQL would fail on NEW.origin_workflow_id for a table without it.
    IF new_row->>'origin_workflow_id' IS NOT NULL THEN
      origin := jsonb_build_object('workflowId', new_row->'origin_workflow_id', 'depth', (new_row->>'origin_depth')::int);
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    action := 'deleted';
  ELSE
    -- An UPDATE that changed nothing the API shows is no event.
    IF "workspace".entity_json(kind, old_row) - 'updatedAt' = "workspace".entity_json(kind, new_row) - 'updatedAt' THEN RETURN NULL; END IF;
    action := CASE WHEN kind = 'task' AND new_row->>'status' = 'done' AND old_row->>'status' <> 'done' THEN 'completed' ELSE 'updated' END;
  END IF;
  INSERT INTO "workspace"."outbox" (topic, key, value) VALUES (
    'workspace.entity.changed.v1',
    COALESCE(new_row->>'id', old_row->>'id'),
    jsonb_build_object(
      'eventId', gen_random_uuid(),
      'ownerId', owner,
      'entity', kind,
      'entityId', COALESCE(new_row->'id', old_row->'id'),
      'action', action,
      'changedAt', "workspace".iso_ts(clock_timestamp()),
      'before', CASE WHEN old_row IS NULL THEN 'null'::jsonb ELSE "workspace".entity_json(kind, old_row) END,
      'after', CASE WHEN new_row IS NULL THEN 'null'::jsonb ELSE "workspace".entity_json(kind, new_row) END,
      'origin', origin
    )
  );
  RETURN NULL;
END
$$;

CREATE TRIGGER "task_announce_change" AFTER INSERT OR UPDATE OR DELETE ON "workspace"."task"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('task');
CREATE TRIGGER "project_announce_change" AFTER INSERT OR UPDATE OR DELETE ON "workspace"."project"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('project');
CREATE TRIGGER "calendar_entry_announce_change" AFTER INSERT OR UPDATE OR DELETE ON "workspace"."calendar_entry"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('calendar_entry');
CREATE TRIGGER "note_announce_change" AFTER INSERT OR UPDATE OR DELETE ON "workspace"."note"
  FOR EACH ROW EXECUTE FUNCTION "workspace".announce_entity_change('note');
