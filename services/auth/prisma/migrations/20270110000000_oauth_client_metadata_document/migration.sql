-- auth: OAuth Client ID Metadata Documents (docs/auth.md, "Client ID Metadata Documents"). A client
-- whose client_id is an https URL is a row here too, so grants, codes and tokens reference it like a
-- registered client; the row caches its validated document until metadata_expires_at.
ALTER TABLE "auth"."oauth_client" ADD COLUMN "metadata_url" TEXT;
ALTER TABLE "auth"."oauth_client" ADD COLUMN "logo_uri" TEXT;
ALTER TABLE "auth"."oauth_client" ADD COLUMN "metadata_fetched_at" TIMESTAMPTZ(3);
ALTER TABLE "auth"."oauth_client" ADD COLUMN "metadata_expires_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "oauth_client_metadata_url_key" ON "auth"."oauth_client" ("metadata_url");
-- A document's client is public (no secret may be in a document) and always knows when to fetch again.
ALTER TABLE "auth"."oauth_client" ADD CONSTRAINT "oauth_client_metadata_check" CHECK (
  "metadata_url" IS NULL OR ("secret_hash" IS NULL AND "token_endpoint_auth_method" = 'none' AND "metadata_fetched_at" IS NOT NULL AND "metadata_expires_at" IS NOT NULL)
);
