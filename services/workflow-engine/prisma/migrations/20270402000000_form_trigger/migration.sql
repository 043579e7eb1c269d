-- Runs of hosted forms (trigger type `form`, docs/triggers.md "Form"): published by webhook-ingest
-- when someone submits the workflow's form at /form/<id>.
ALTER TABLE "engine"."run" DROP CONSTRAINT "run_trigger_type_check";
ALTER TABLE "engine"."run" ADD CONSTRAINT "run_trigger_type_check" CHECK ("trigger_type" IN ('webhook', 'manual', 'schedule', 'note', 'entity', 'error', 'form'));
