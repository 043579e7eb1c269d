-- webhook-ingest's lookup tells whether a workflow needs its deliveries' raw body (docs/webhooks.md,
-- "Raw body"): a Verify signature node in the graph, or triggerConfig.rawBody. The trigger reader may
-- still not read the graph (it can hold inline secrets): Postgres computes the flag on every write,
-- and the role is granted that one column.
ALTER TABLE "workspace"."workflow"
  ADD COLUMN "uses_raw_body" BOOLEAN GENERATED ALWAYS AS (
    "graph" @> '{"nodes":[{"type":"verify_signature"}]}'::jsonb OR "trigger_config" @> '{"rawBody":true}'::jsonb
  ) STORED;
GRANT SELECT ("uses_raw_body") ON "workspace"."workflow" TO flowdesk_trigger_reader;
