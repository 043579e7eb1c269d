-- The form trigger (docs/triggers.md, "Form"): Flowdesk hosts the workflow's form at /form/<id>
-- (webhook-ingest); its definition is the workflow's triggerConfig, checked on save.
ALTER TYPE "workspace"."TriggerType" ADD VALUE IF NOT EXISTS 'form';
