-- A note or calendar entry made by a workflow's Create Note / Create Calendar Entry step keeps the run's
-- origin, as a task does (20261226000000_entity_events): announce_entity_change() puts it on the change
-- event, and the engine's loop guard never starts that workflow again from it (docs/triggers.md, "Loops").
-- Comments have no change events (no trigger fires on them), so they carry none. Not part of the API's entities.
ALTER TABLE "workspace"."note" ADD COLUMN "origin_workflow_id" UUID;
ALTER TABLE "workspace"."note" ADD COLUMN "origin_depth" SMALLINT;
ALTER TABLE "workspace"."calendar_entry" ADD COLUMN "origin_workflow_id" UUID;
ALTER TABLE "workspace"."calendar_entry" ADD COLUMN "origin_depth" SMALLINT;
