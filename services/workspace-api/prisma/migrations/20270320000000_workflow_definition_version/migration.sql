-- The number of a workflow's newest version (workspace.workflow_version, docs/workflow-versions.md),
-- kept with the workflow row so that workflow.changed events and the definitions API can carry it
-- (libs/contracts WorkflowDefinition.definitionVersion) and the engine records it with every run.
-- Written by the save that records a version, in the same transaction. Existing workflows take the
-- newest version they have (version 1 since 20270310000000); null only if a workflow has none.
ALTER TABLE "workspace"."workflow" ADD COLUMN "definition_version" INTEGER;
UPDATE "workspace"."workflow" w
   SET "definition_version" = v.newest
  FROM (SELECT "workflow_id", max("number") AS newest FROM "workspace"."workflow_version" GROUP BY "workflow_id") v
 WHERE v."workflow_id" = w."id";
-- The definitions API reads it (its role has column grants, like every column it answers).
GRANT SELECT ("definition_version") ON "workspace"."workflow" TO flowdesk_definition_reader;
