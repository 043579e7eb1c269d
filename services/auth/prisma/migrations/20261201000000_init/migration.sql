-- auth: users and API keys.
-- Written by hand in Prisma's migrations/ format (see docs/data-and-rls.md); libs/db's runner applies
-- it where Prisma's schema engine is missing and records it in auth._prisma_migrations.

CREATE SCHEMA IF NOT EXISTS "auth";

CREATE TABLE "auth"."user" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "user_pkey" PRIMARY KEY ("id"),
    -- The application lower-cases emails; the database refuses any row that was not, so the unique
    -- index below is case-insensitive whoever writes.
    CONSTRAINT "user_email_lower_check" CHECK ("email" = lower("email"))
);
CREATE UNIQUE INDEX "user_email_key" ON "auth"."user"("email");

CREATE TABLE "auth"."api_key" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "scope" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_key_scope_check" CHECK ("scope" IN ('mcp:read', 'mcp:write')),
    CONSTRAINT "api_key_secret_hash_check" CHECK (octet_length("secret_hash") = 32)
);
CREATE UNIQUE INDEX "api_key_secret_hash_key" ON "auth"."api_key"("secret_hash");
CREATE INDEX "api_key_user_id_created_at_idx" ON "auth"."api_key"("user_id", "created_at" DESC);
ALTER TABLE "auth"."api_key" ADD CONSTRAINT "api_key_user_id_fkey"
    FOREIGN KEY ("user_id") REFERENCES "auth"."user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
