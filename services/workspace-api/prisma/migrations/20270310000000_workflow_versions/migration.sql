-- Version history of a workflow's definition (docs/workflow-versions.md): every save of the definition
-- (create, update of name, description, graph, trigger, webhook-secret requirement, execution order,
-- error workflow, retention; a restore) writes one row in the save's own transaction, numbered 1, 2, …
-- per workflow. The row holds the whole definition as saved (never the webhook secret: it is not part
-- of the definition). Rows go with their workflow (composite foreign key with the owner, like every
-- user row here) and are bounded per workflow (WORKFLOW_VERSIONS_KEEP, the newest kept).
CREATE TABLE "workspace"."workflow_version" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "owner_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "number" INTEGER NOT NULL,
  "definition" JSONB NOT NULL,
  "message" TEXT,
  "author_user_id" UUID NOT NULL,
  "author_client" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "workflow_version_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "workflow_version_workflow_id_number_key" ON "workspace"."workflow_version"("workflow_id", "number");
ALTER TABLE "workspace"."workflow_version" ADD CONSTRAINT "workflow_version_workflow_id_owner_id_fkey"
  FOREIGN KEY ("workflow_id", "owner_id") REFERENCES "workspace"."workflow"("id", "owner_id")
  ON DELETE CASCADE ON UPDATE CASCADE;

-- Existing workflows start their history with their current definition as version 1.
INSERT INTO "workspace"."workflow_version" ("owner_id", "workflow_id", "number", "definition", "message", "author_user_id", "created_at")
SELECT w."owner_id", w."id", 1,
       jsonb_build_object(
         'name', w."name", 'description', w."description", 'triggerType', w."trigger_type"::text,
         'triggerConfig', w."trigger_config", 'graph', w."graph", 'requireWebhookSecret', w."require_webhook_secret",
         'executionOrder', w."execution_order", 'errorWorkflowId', w."error_workflow_id",
         'retention', CASE WHEN w."retention_days" IS NULL AND w."retention_runs" IS NULL THEN 'null'::jsonb
                           ELSE jsonb_strip_nulls(jsonb_build_object('days', w."retention_days", 'runs', w."retention_runs")) END),
       'Version history started', w."owner_id", w."updated_at"
  FROM "workspace"."workflow" w;

ALTER TABLE "workspace"."workflow_version" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "workspace"."workflow_version" FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "workspace"."workflow_version" FOR ALL TO PUBLIC
  USING (owner_id = "workspace".current_user_id())
  WITH CHECK (owner_id = "workspace".current_user_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON "workspace"."workflow_version" TO flowdesk_app;
