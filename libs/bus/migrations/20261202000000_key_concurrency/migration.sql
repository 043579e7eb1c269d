-- keyConcurrency and ordered messages (docs/event-bus.md, Order per key): a message published with
-- `ordered: true` waits for every earlier message of its key and holds back the later ones, also for
-- subscribers that handle a key's messages concurrently. The flag is copied to each delivery row so
-- that the claim decides from the delivery index alone.
ALTER TABLE "bus"."message" ADD COLUMN "ordered" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "bus"."delivery" ADD COLUMN "ordered" BOOLEAN NOT NULL DEFAULT false;
