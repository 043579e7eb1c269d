-- Side effects once (docs/workflow-engine.md, "Durable runs"): a task made by a workflow run's Create
-- Task step keeps the step's idempotency key; the same key again (the step executed again after its
-- engine died) inserts nothing and answers the task made the first time. Not part of the API's Task.
-- Partial: tasks made by people carry no key and cost the index nothing.
ALTER TABLE "workspace"."task" ADD COLUMN "idempotency_key" TEXT;
CREATE UNIQUE INDEX "task_owner_id_idempotency_key_key" ON "workspace"."task"("owner_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
