-- auth: indexes for the OAuth sweep (src/domain/oauth/sweep.ts, docs/auth.md "Rows the sweep deletes"):
-- expired consent requests, and Client ID Metadata Document clients whose cached document expired.
CREATE INDEX "oauth_consent_request_expires_at_idx" ON "auth"."oauth_consent_request" ("expires_at");
CREATE INDEX "oauth_consent_request_client_id_idx" ON "auth"."oauth_consent_request" ("client_id");
CREATE INDEX "oauth_client_metadata_expires_at_idx" ON "auth"."oauth_client" ("metadata_expires_at") WHERE "metadata_url" IS NOT NULL;
CREATE INDEX "oauth_grant_live_client_id_idx" ON "auth"."oauth_grant" ("client_id") WHERE "revoked_at" IS NULL;
