-- Run this step (docs/workflow-engine.md, "Testing one step"): one row per step test, so its owner can
-- see what was sent in their name (GET /workflows/:id/step-tests). The owner's own rows only (RLS);
-- rows older than 30 days are swept by the engine's own login.
CREATE TABLE "engine"."step_test" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_id" UUID NOT NULL DEFAULT "engine".current_user_id(),
    "workflow_id" UUID NOT NULL,
    "node_id" TEXT NOT NULL,
    "node_type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    -- The step's error, cut to 500 characters; credential values already masked.
    "error" TEXT,
    -- HTTP Request: the method and the URL as recorded (secrets masked); null for other nodes.
    "request" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "step_test_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "step_test_owner_workflow_idx" ON "engine"."step_test"("owner_id", "workflow_id", "created_at" DESC, "id" DESC);
CREATE INDEX "step_test_created_at_idx" ON "engine"."step_test"("created_at");
ALTER TABLE "engine"."step_test" ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."step_test" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
GRANT SELECT, INSERT ON "engine"."step_test" TO flowdesk_app;
