-- A pinned sample (docs/console.md, "Pinned sample"): while "sample_pinned_at" is set, the engine's
-- write of the last delivery (PUT /internal/v1/workflows/:id/sample-payload) leaves "sample_payload"
-- as pinned. "sample_source" says where it came from (delivery, template, typed, import; libs/contracts
-- SampleSource) and "sample_run_id" which run's trigger data it is (a delivery). Existing workflows
-- keep their last delivery, unpinned; an imported file's sample (samplePayload) was meant as pinned.
ALTER TABLE "workspace"."workflow" ADD COLUMN "sample_pinned_at" TIMESTAMPTZ(3);
ALTER TABLE "workspace"."workflow" ADD COLUMN "sample_source" TEXT;
ALTER TABLE "workspace"."workflow" ADD COLUMN "sample_run_id" UUID;
