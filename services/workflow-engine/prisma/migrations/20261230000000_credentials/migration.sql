-- workflow-engine: the credentials store (docs/credentials.md). The engine is the only service that
-- needs a credential's plaintext (at run time), so it owns the store: a run resolves
-- {{credentials.<name>}} with one query on its own database, no call to another service.
-- The value is sealed with AES-256-GCM under CREDENTIALS_KEY (libs/service-kit SecretBox, v2 form
-- naming the key id, for rotation); it is never returned by any API. Row-level security as everywhere.

CREATE TABLE "engine"."credential" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_id" UUID NOT NULL DEFAULT "engine".current_user_id(),
    "name" TEXT NOT NULL,
    "value_sealed" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "credential_pkey" PRIMARY KEY ("id"),
    -- The name is how a node refers to it: {{credentials.<name>}}, one path segment of the template.
    CONSTRAINT "credential_name_check" CHECK ("name" ~ '^[A-Za-z][A-Za-z0-9_-]{0,63}$'),
    CONSTRAINT "credential_value_sealed_check" CHECK ("value_sealed" LIKE 'v2.%')
);
-- owner_id leads the unique key: a uniqueness check ignores row-level security.
CREATE UNIQUE INDEX "credential_owner_id_name_key" ON "engine"."credential"("owner_id", "name");

ALTER TABLE "engine"."credential" ENABLE ROW LEVEL SECURITY;
ALTER TABLE "engine"."credential" FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON "engine"."credential" FOR ALL TO PUBLIC
  USING (owner_id = "engine".current_user_id())
  WITH CHECK (owner_id = "engine".current_user_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON "engine"."credential" TO flowdesk_app;
