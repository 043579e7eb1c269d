-- MCP SSE polling (2025-11-25, SEP-1699): the events of resumable SSE answers, so a client whose
-- stream closed mid-call reconnects (GET with Last-Event-ID) to any replica and gets the rest.
-- Short-lived: swept a few minutes after they were written (docs/mcp-gateway.md, "SSE polling").
CREATE TABLE "gateway"."mcp_stream_event" (
    "id" BIGSERIAL NOT NULL,
    "stream_id" TEXT NOT NULL,
    "session_hash" TEXT NOT NULL,
    "message" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "mcp_stream_event_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "mcp_stream_event_stream_id_id_idx" ON "gateway"."mcp_stream_event"("stream_id", "id");
CREATE INDEX "mcp_stream_event_created_at_idx" ON "gateway"."mcp_stream_event"("created_at");
