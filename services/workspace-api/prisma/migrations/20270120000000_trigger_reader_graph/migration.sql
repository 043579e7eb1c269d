-- webhook-ingest's lookup tells whether a workflow needs its deliveries' raw body (a Verify signature
-- node in the graph, docs/webhooks.md "Raw body"): the trigger reader may now read the graph too.
-- The lookup answers a boolean; the graph itself never leaves workspace-api on that route.
GRANT SELECT ("graph") ON "workspace"."workflow" TO flowdesk_trigger_reader;
