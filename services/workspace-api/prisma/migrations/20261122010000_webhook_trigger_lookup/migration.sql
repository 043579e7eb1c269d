-- webhook-ingest must find a workflow's webhook trigger by id before it knows any user. Rather than
-- lifting row-level security for it, a dedicated role may read exactly the columns that lookup needs,
-- of the workflow table only, through its own policy. Nothing else in the schema is granted to it.
DO $$
BEGIN
  CREATE ROLE flowdesk_trigger_reader NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
GRANT flowdesk_trigger_reader TO CURRENT_USER;
GRANT USAGE ON SCHEMA "workspace" TO flowdesk_trigger_reader;
GRANT EXECUTE ON FUNCTION "workspace".current_user_id() TO flowdesk_trigger_reader;
GRANT SELECT ("id", "owner_id", "trigger_type", "active", "require_webhook_secret", "webhook_secret_cipher", "trigger_config")
  ON "workspace"."workflow" TO flowdesk_trigger_reader;
CREATE POLICY trigger_lookup ON "workspace"."workflow" FOR SELECT TO flowdesk_trigger_reader USING (true);
