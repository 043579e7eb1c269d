-- Side effects once for the workflow engine's Create Note, Create Calendar Entry and Add Comment steps
-- (docs/workflow-engine.md, "Durable runs"), as for tasks (20270110000000_task_idempotency_key): the row
-- keeps the step's idempotency key; the same key again creates nothing and answers the row made the
-- first time. Not part of the API's entities. Partial: rows made by people carry no key.
ALTER TABLE "workspace"."note" ADD COLUMN "idempotency_key" TEXT;
CREATE UNIQUE INDEX "note_owner_id_idempotency_key_key" ON "workspace"."note"("owner_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
ALTER TABLE "workspace"."calendar_entry" ADD COLUMN "idempotency_key" TEXT;
CREATE UNIQUE INDEX "calendar_entry_owner_id_idempotency_key_key" ON "workspace"."calendar_entry"("owner_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
ALTER TABLE "workspace"."comment" ADD COLUMN "idempotency_key" TEXT;
CREATE UNIQUE INDEX "comment_owner_id_idempotency_key_key" ON "workspace"."comment"("owner_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
