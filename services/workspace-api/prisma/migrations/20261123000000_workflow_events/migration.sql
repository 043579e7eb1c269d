-- Workflow definitions as events (workflow.changed through an outbox), the execution order setting,
-- and the runs moving to the workflow engine (its own `engine` schema).

-- Every change of a workflow raises its version; the caches fed by workflow.changed events never
-- replace a newer version by an older one.
ALTER TABLE "workspace"."workflow" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "workspace"."workflow" ADD COLUMN "execution_order" TEXT NOT NULL DEFAULT 'parallel';
ALTER TABLE "workspace"."workflow" ADD CONSTRAINT "workflow_execution_order_check" CHECK ("execution_order" IN ('parallel', 'ordered'));

-- The outbox: an event row written in the same transaction as the change it announces, so the event
-- exists iff the change committed; a relay publishes the rows to the bus and deletes them. Service
-- bookkeeping, not user data: requests (as flowdesk_app) may only append to it; only the service's
-- own login (the relay) reads and deletes.
CREATE TABLE "workspace"."outbox" (
    "id" BIGSERIAL NOT NULL,
    "topic" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);
GRANT INSERT ON "workspace"."outbox" TO flowdesk_app;
GRANT USAGE ON SEQUENCE "workspace"."outbox_id_seq" TO flowdesk_app;

-- The engine's and ingest's cold start read every workflow's definition once, before any user: like
-- the trigger lookup, a dedicated role reads exactly the definition's columns through its own policy.
DO $$
BEGIN
  CREATE ROLE flowdesk_definition_reader NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
GRANT flowdesk_definition_reader TO CURRENT_USER;
GRANT USAGE ON SCHEMA "workspace" TO flowdesk_definition_reader;
GRANT SELECT ("id", "owner_id", "version", "trigger_type", "active", "execution_order", "graph", "trigger_config")
  ON "workspace"."workflow" TO flowdesk_definition_reader;
CREATE POLICY definition_reader ON "workspace"."workflow" FOR SELECT TO flowdesk_definition_reader USING (true);
-- The trigger lookup also tells ingest the execution order (the bus's `ordered` flag).
GRANT SELECT ("execution_order") ON "workspace"."workflow" TO flowdesk_trigger_reader;

-- Runs and their steps are the workflow engine's data now (engine.run). Nothing reads this table any
-- more; run history recorded before the upgrade is not carried over (no service reads another's tables).
DROP TABLE "workspace"."workflow_run";
DROP TYPE "workspace"."RunStatus";
