-- Retention (docs/event-bus.md, Retention). A consumer of a group refreshes `seen_at` while it runs;
-- a group not seen for BUS_GROUP_EXPIRY_MS (an mcp-gateway replica's group after a restart) is
-- dropped with its deliveries and lanes. A message delivered to every group it was fanned out to is
-- deleted, with its delivery rows, once older than BUS_RETENTION_MS, in bounded batches. The sweeper
-- deletes a message's deliveries itself, through their primary key, so the foreign key (whose cascade
-- and per-insert check would need an index on delivery.sequence alone) is dropped.
ALTER TABLE "bus"."subscription" ADD COLUMN "seen_at" TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE "bus"."delivery" DROP CONSTRAINT IF EXISTS "delivery_sequence_fkey";
