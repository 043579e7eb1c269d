-- workflow-engine: credential types (docs/credentials.md, "Types"; libs/contracts/src/credential-types.ts).
-- A credential is now one of several types: `secret` (one value, as every credential was before, so
-- existing rows keep working unchanged) or a typed one (an API key in a header or query parameter, a
-- bearer token, Basic auth, an SMTP server) whose fields object is sealed whole in value_sealed, as
-- JSON, with the same SecretBox (v2, AES-256-GCM). The type itself is no secret: it lives in the clear
-- so the API can list it. The set of types is the registry's; the CHECK keeps only the id's form, so
-- a new type needs no migration. Row-level security is the table's (owner_only applies to every column).
ALTER TABLE "engine"."credential" ADD COLUMN "type" TEXT NOT NULL DEFAULT 'secret';
ALTER TABLE "engine"."credential" ADD CONSTRAINT "credential_type_check" CHECK ("type" ~ '^[a-z][a-z0-9_]{0,31}$');
