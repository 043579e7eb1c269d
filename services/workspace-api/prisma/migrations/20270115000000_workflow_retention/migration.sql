-- A workflow's own run history retention (docs/operations.md, "Run history retention"): keep its
-- finished runs this many days and/or this many newest ones; null: the engine's global setting. The
-- engine reads the columns with the definitions (workflow.changed events) and prunes by them.
ALTER TABLE "workspace"."workflow" ADD COLUMN "retention_days" INTEGER, ADD COLUMN "retention_runs" INTEGER;
ALTER TABLE "workspace"."workflow" ADD CONSTRAINT "workflow_retention_days_check" CHECK ("retention_days" BETWEEN 1 AND 3650);
ALTER TABLE "workspace"."workflow" ADD CONSTRAINT "workflow_retention_runs_check" CHECK ("retention_runs" BETWEEN 1 AND 1000000);
GRANT SELECT ("retention_days", "retention_runs") ON "workspace"."workflow" TO flowdesk_definition_reader;
