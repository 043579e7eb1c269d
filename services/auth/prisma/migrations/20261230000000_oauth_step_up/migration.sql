-- auth: MCP step-up (docs/auth.md, "Step-up"). When the gateway refuses an OAuth access token with
-- 403 insufficient_scope it tells auth which scope the call needed; the next refresh of that grant
-- (within minutes) is answered invalid_grant once, so a client that refreshes on a 403 (the official
-- SDK does, without a scope) starts a new authorization asking for the wider scope instead.
ALTER TABLE "auth"."oauth_grant" ADD COLUMN "step_up_scope" TEXT;
ALTER TABLE "auth"."oauth_grant" ADD COLUMN "step_up_requested_at" TIMESTAMPTZ(3);
ALTER TABLE "auth"."oauth_grant" ADD CONSTRAINT "oauth_grant_step_up_check" CHECK (("step_up_scope" IS NULL) = ("step_up_requested_at" IS NULL));
