-- Embedded event bus: messages and per-(group, message) delivery state in their own schema.
-- Written by hand in Prisma's migrations/ format; libs/db migrate(db, dir, 'bus') applies it.

CREATE SCHEMA IF NOT EXISTS "bus";

-- Every published message, in publish order (sequence). Never updated.
CREATE TABLE "bus"."message" (
  "sequence"   BIGSERIAL PRIMARY KEY,
  "id"         UUID NOT NULL DEFAULT gen_random_uuid(),
  "topic"      TEXT NOT NULL,
  "key"        TEXT NOT NULL,
  "value"      JSONB NOT NULL,
  "headers"    JSONB NOT NULL DEFAULT '{}'::jsonb,
  "created_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  CONSTRAINT "message_id_key" UNIQUE ("id")
);
CREATE INDEX "message_topic_sequence_idx" ON "bus"."message" ("topic", "sequence");

-- The consumer groups of each topic. A group registered late starts from the topic's first message
-- (Kafka's fromBeginning); publish fans each message out to the groups registered at that time.
CREATE TABLE "bus"."subscription" (
  "topic"      TEXT NOT NULL,
  "group_id"   TEXT NOT NULL,
  "created_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("topic", "group_id")
);

-- One row per (group, message): its progress and lease. A consumer claims a row by setting
-- locked_by/locked_until (FOR UPDATE SKIP LOCKED, so concurrent consumers never take the same row),
-- renews the lease while the handler runs, and sets done_at after the handler resolved. A row whose
-- lease ran out (consumer died) is claimed again: at-least-once.
CREATE TABLE "bus"."delivery" (
  "group_id"     TEXT NOT NULL,
  "sequence"     BIGINT NOT NULL REFERENCES "bus"."message" ("sequence") ON DELETE CASCADE,
  "topic"        TEXT NOT NULL,
  "key"          TEXT NOT NULL,
  "attempts"     INTEGER NOT NULL DEFAULT 0,
  "available_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "locked_by"    TEXT,
  "locked_until" TIMESTAMPTZ,
  "done_at"      TIMESTAMPTZ,
  "dead_at"      TIMESTAMPTZ,
  "last_error"   TEXT,
  PRIMARY KEY ("group_id", "sequence")
);
-- The claim scans a group's pending rows in order and checks that no earlier row of the same key
-- is pending; both lookups use these partial indexes, which shrink as work is done.
CREATE INDEX "delivery_pending_idx" ON "bus"."delivery" ("group_id", "topic", "sequence") WHERE "done_at" IS NULL;
CREATE INDEX "delivery_pending_key_idx" ON "bus"."delivery" ("group_id", "topic", "key", "sequence") WHERE "done_at" IS NULL;
