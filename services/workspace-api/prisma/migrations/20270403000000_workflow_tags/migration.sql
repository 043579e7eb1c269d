-- Tags on workflows (docs/workspace-api.md, "Search, tags, overview"): labels the owner files a
-- workflow under, filtered by GET /workflows?tag= (and matched by q). Not part of the definition: a
-- change of tags alone records no version. The same limits as tasks' and notes' tags (20 per item,
-- 50 characters, no spaces or commas; libs/contracts Tags).
ALTER TABLE "workspace"."workflow" ADD COLUMN "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

-- The list's other orders page by keyset on (key, id) per owner: sort=updated on the update time,
-- sort=name on the name in lower case (A and a side by side, whatever the database's collation).
ALTER TABLE "workspace"."workflow" ADD COLUMN "name_key" TEXT GENERATED ALWAYS AS (lower("name")) STORED;
CREATE INDEX "workflow_owner_id_updated_at_id_idx" ON "workspace"."workflow"("owner_id", "updated_at" DESC, "id" DESC);
CREATE INDEX "workflow_owner_id_name_key_id_idx" ON "workspace"."workflow"("owner_id", "name_key", "id");
