-- Delivery ids a Verify signature node accepted, per workflow, for the node's tolerance window
-- (docs/workflow-engine.md, "Verify signature", refuseReplays): a second delivery with the same id
-- inside the window fails the step. Written and swept only by the engine's own login (the table's
-- owner); no user reads it, so flowdesk_app gets no grant.
CREATE TABLE "engine"."seen_delivery" (
    "workflow_id" UUID NOT NULL,
    -- `<preset>:<the provider's delivery id>` (webhook-id, the Stripe event id, X-GitHub-Delivery, …), at most 300 characters.
    "delivery_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "seen_delivery_pkey" PRIMARY KEY ("workflow_id", "delivery_id")
);
-- The sweep's only read: expired rows, oldest first.
CREATE INDEX "seen_delivery_expires_at_idx" ON "engine"."seen_delivery"("expires_at");
