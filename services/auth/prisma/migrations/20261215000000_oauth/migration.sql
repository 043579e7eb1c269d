-- auth: the OAuth 2.1 authorization server (docs/auth.md): dynamically registered clients, pending
-- login + consent requests, grants (user x client), authorization codes, token families and tokens.
-- Every secret (client secret, CSRF token, code, access and refresh token) is stored as its SHA-256.

CREATE TABLE "auth"."oauth_client" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "redirect_uris" TEXT[] NOT NULL,
    "grant_types" TEXT[] NOT NULL,
    "token_endpoint_auth_method" TEXT NOT NULL,
    "secret_hash" BYTEA,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "oauth_client_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "oauth_client_redirect_uris_check" CHECK (cardinality("redirect_uris") > 0),
    -- A confidential client has a secret, a public one has none: never half of each.
    CONSTRAINT "oauth_client_auth_method_check" CHECK (
        ("token_endpoint_auth_method" = 'none' AND "secret_hash" IS NULL)
        OR ("token_endpoint_auth_method" = 'client_secret_basic' AND octet_length("secret_hash") = 32))
);

CREATE TABLE "auth"."oauth_consent_request" (
    "id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "code_challenge" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "state" TEXT,
    "csrf_hash" BYTEA NOT NULL,
    "browser_hash" BYTEA NOT NULL,
    "failed_logins" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "oauth_consent_request_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "oauth_consent_request_csrf_hash_key" ON "auth"."oauth_consent_request"("csrf_hash");
ALTER TABLE "auth"."oauth_consent_request" ADD CONSTRAINT "oauth_consent_request_client_id_fkey"
    FOREIGN KEY ("client_id") REFERENCES "auth"."oauth_client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "auth"."oauth_grant" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "scope" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "oauth_grant_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "oauth_grant_scope_check" CHECK ("scope" IN ('mcp:read', 'mcp:read mcp:write'))
);
CREATE INDEX "oauth_grant_user_id_created_at_idx" ON "auth"."oauth_grant"("user_id", "created_at" DESC);
CREATE INDEX "oauth_grant_user_id_client_id_idx" ON "auth"."oauth_grant"("user_id", "client_id");
-- One live grant per user and client; a consent after a Disconnect starts a new one.
CREATE UNIQUE INDEX "oauth_grant_live_key" ON "auth"."oauth_grant"("user_id", "client_id") WHERE "revoked_at" IS NULL;
ALTER TABLE "auth"."oauth_grant" ADD CONSTRAINT "oauth_grant_user_id_fkey"
    FOREIGN KEY ("user_id") REFERENCES "auth"."user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "auth"."oauth_grant" ADD CONSTRAINT "oauth_grant_client_id_fkey"
    FOREIGN KEY ("client_id") REFERENCES "auth"."oauth_client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "auth"."oauth_authorization_code" (
    "id" UUID NOT NULL,
    "code_hash" BYTEA NOT NULL,
    "grant_id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "code_challenge" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    CONSTRAINT "oauth_authorization_code_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "oauth_authorization_code_code_hash_check" CHECK (octet_length("code_hash") = 32)
);
CREATE UNIQUE INDEX "oauth_authorization_code_code_hash_key" ON "auth"."oauth_authorization_code"("code_hash");
ALTER TABLE "auth"."oauth_authorization_code" ADD CONSTRAINT "oauth_authorization_code_grant_id_fkey"
    FOREIGN KEY ("grant_id") REFERENCES "auth"."oauth_grant"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "auth"."oauth_authorization_code" ADD CONSTRAINT "oauth_authorization_code_client_id_fkey"
    FOREIGN KEY ("client_id") REFERENCES "auth"."oauth_client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "auth"."oauth_token_family" (
    "id" UUID NOT NULL,
    "grant_id" UUID NOT NULL,
    "authorization_code_id" UUID,
    "scope" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "oauth_token_family_pkey" PRIMARY KEY ("id")
);
-- One family per code: a second redemption of a code can never start another.
CREATE UNIQUE INDEX "oauth_token_family_authorization_code_id_key" ON "auth"."oauth_token_family"("authorization_code_id");
CREATE INDEX "oauth_token_family_grant_id_idx" ON "auth"."oauth_token_family"("grant_id");
ALTER TABLE "auth"."oauth_token_family" ADD CONSTRAINT "oauth_token_family_grant_id_fkey"
    FOREIGN KEY ("grant_id") REFERENCES "auth"."oauth_grant"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "auth"."oauth_token_family" ADD CONSTRAINT "oauth_token_family_authorization_code_id_fkey"
    FOREIGN KEY ("authorization_code_id") REFERENCES "auth"."oauth_authorization_code"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "auth"."oauth_token" (
    "id" UUID NOT NULL,
    "family_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "rotated_at" TIMESTAMPTZ(3),
    "successor_cipher" BYTEA,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "oauth_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "oauth_token_kind_check" CHECK ("kind" IN ('access', 'refresh')),
    CONSTRAINT "oauth_token_token_hash_check" CHECK (octet_length("token_hash") = 32)
);
CREATE UNIQUE INDEX "oauth_token_token_hash_key" ON "auth"."oauth_token"("token_hash");
CREATE INDEX "oauth_token_family_id_idx" ON "auth"."oauth_token"("family_id");
ALTER TABLE "auth"."oauth_token" ADD CONSTRAINT "oauth_token_family_id_fkey"
    FOREIGN KEY ("family_id") REFERENCES "auth"."oauth_token_family"("id") ON DELETE CASCADE ON UPDATE CASCADE;
