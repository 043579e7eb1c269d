-- Error workflows (docs/workflow-engine.md, "Error workflow"): a workflow may name another workflow
-- of its owner, which the engine starts when one of its runs fails; and the `error` trigger type that
-- such a workflow has. The engine reads the column with the definitions (workflow.changed events).
ALTER TYPE "workspace"."TriggerType" ADD VALUE IF NOT EXISTS 'error';
ALTER TABLE "workspace"."workflow" ADD COLUMN "error_workflow_id" UUID;
-- Deleting the error workflow leaves the workflows that named it without one. The owner check is the
-- API's (the foreign key itself ignores row-level security).
ALTER TABLE "workspace"."workflow" ADD CONSTRAINT "workflow_error_workflow_id_fkey"
  FOREIGN KEY ("error_workflow_id") REFERENCES "workspace"."workflow"("id") ON DELETE SET NULL;
CREATE INDEX "workflow_error_workflow_id_idx" ON "workspace"."workflow" ("error_workflow_id") WHERE "error_workflow_id" IS NOT NULL;
GRANT SELECT ("error_workflow_id") ON "workspace"."workflow" TO flowdesk_definition_reader;
