-- mcp-gateway: MCP sessions (Mcp-Session-Id), shared by every gateway replica.
-- No row-level security: these rows are the gateway's own bookkeeping, not user data; only the
-- gateway connects to this schema, and it binds each session to the identity that first used it.

CREATE SCHEMA IF NOT EXISTS "gateway";

CREATE TABLE "gateway"."mcp_session" (
    "id_hash" TEXT NOT NULL,
    "user_id" UUID,
    "credential_id" TEXT,
    "protocol_version" TEXT NOT NULL,
    "client_name" TEXT,
    "client_version" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "mcp_session_pkey" PRIMARY KEY ("id_hash"),
    CONSTRAINT "mcp_session_bound_whole" CHECK (("user_id" IS NULL) = ("credential_id" IS NULL))
);
-- Expired sessions are swept by last use.
CREATE INDEX "mcp_session_last_seen_at_idx" ON "gateway"."mcp_session"("last_seen_at");
