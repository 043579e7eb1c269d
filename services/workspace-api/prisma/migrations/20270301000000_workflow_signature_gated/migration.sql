-- webhook-ingest's lookup tells whether a workflow's graph starts with a provider-signature check
-- (docs/webhooks.md, "Provider signatures without x-webhook-secret"): the trigger has at least one
-- edge, each to a verify_signature node that fails the run on an error (no onError, or "fail"). Such
-- a workflow's deliveries need no x-webhook-secret: GitHub, Stripe and Shopify cannot send one, and
-- their signature, checked first by the workflow with a credential, proves more than the header.
-- The same rule as signatureGated() in libs/contracts (entities/workflows.ts); workspace-api's
-- signature-gate test holds the two to one answer. Computed on every write, so the trigger reader
-- still reads no graph (it may hold inline secrets) and is granted this one column.
CREATE FUNCTION "workspace"."signature_gated"(g jsonb) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(g->'edges', '[]'::jsonb)) e WHERE e->>'from' = 'trigger')
       AND NOT EXISTS (
         SELECT 1 FROM jsonb_array_elements(COALESCE(g->'edges', '[]'::jsonb)) e
          WHERE e->>'from' = 'trigger'
            AND NOT EXISTS (
              SELECT 1 FROM jsonb_array_elements(COALESCE(g->'nodes', '[]'::jsonb)) n
               WHERE n->>'id' = e->>'to' AND n->>'type' = 'verify_signature' AND COALESCE(n->>'onError', 'fail') = 'fail'
            )
       )
  $$;

ALTER TABLE "workspace"."workflow"
  ADD COLUMN "signature_gated" BOOLEAN GENERATED ALWAYS AS ("workspace"."signature_gated"("graph")) STORED;
GRANT SELECT ("signature_gated") ON "workspace"."workflow" TO flowdesk_trigger_reader;
