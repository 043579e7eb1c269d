-- Lanes: one row per (group, topic, key) with work, so that a claim costs O(claimed), not O(backlog)
-- (docs/event-bus.md, Claim). `head` is the key's lowest not-done sequence for the group, or
-- last_seq + 1 when every delivery of the key is done; `last_seq` the highest sequence delivered to
-- the group. A claim walks the group's lanes with work in head order (the partial index below) and
-- reads only the first keyConcurrency not-done deliveries of each, instead of scanning every pending
-- delivery. Publish (upsert), acknowledgement and dead-lettering (under the lane's row lock, so that
-- concurrent acknowledgements of one key never leave a stale head) keep the lane exact.
CREATE TABLE "bus"."lane" (
  "group_id" TEXT NOT NULL,
  "topic"    TEXT NOT NULL,
  "key"      TEXT NOT NULL,
  "head"     BIGINT NOT NULL,
  "last_seq" BIGINT NOT NULL,
  PRIMARY KEY ("group_id", "topic", "key")
);
CREATE INDEX "lane_active_idx" ON "bus"."lane" ("group_id", "topic", "head") WHERE "head" <= "last_seq";

INSERT INTO "bus"."lane" ("group_id", "topic", "key", "head", "last_seq")
SELECT "group_id", "topic", "key",
       COALESCE(min("sequence") FILTER (WHERE "done_at" IS NULL), max("sequence") + 1),
       max("sequence")
  FROM "bus"."delivery"
 GROUP BY "group_id", "topic", "key";

-- The lane index replaces the scan over all pending deliveries of a group.
DROP INDEX "bus"."delivery_pending_idx";
