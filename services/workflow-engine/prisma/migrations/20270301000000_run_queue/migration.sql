-- Runs waiting for their owner's share of the engine (docs/workflow-engine.md, "Fairness across
-- owners"). A trigger event whose owner already has ENGINE_OWNER_CONCURRENCY runs in flight on the
-- replica that received it is stored here and acknowledged, so it never holds one of the consumer's
-- slots; each replica's scheduler claims rows round-robin across owners (a lease, compare-and-set)
-- as its owners' runs finish, runs them and deletes them. Under the cap nothing is written here.
CREATE TABLE "engine"."run_queue" (
    "id" BIGSERIAL NOT NULL,
    "owner_id" UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    -- The trigger event as delivered.
    "event" JSONB NOT NULL,
    "queued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Claimable when null or past: a replica that claimed it and died leaves it to another.
    "lease_until" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "run_queue_pkey" PRIMARY KEY ("id")
);
-- One row per event (a redelivered event is queued once).
CREATE UNIQUE INDEX "run_queue_event_key" ON "engine"."run_queue"("owner_id", "workflow_id", "event_id");
-- The scheduler's reads: an owner's oldest row.
CREATE INDEX "run_queue_owner_id_idx" ON "engine"."run_queue"("owner_id", "id");
-- Only the engine's own login (the table's owner) reads and writes it; the policy keeps the rule
-- every engine table follows for any other role.
ALTER TABLE "engine"."run_queue" ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."run_queue" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
