-- A finished run's steps are its largest value (a For each over 10 items: ~13 kB of JSON per run),
-- compressed into TOAST on every run's outcome. lz4 compresses it in about a third of pglz's time
-- (docs/performance.md, 2026-11-29): new values of engine.run.steps and of the checkpoints use it;
-- values already stored stay as they are (both read the same). A server built without lz4 (PGlite
-- is) answers feature_not_supported and keeps the default, pglz.
DO $migration$
BEGIN
  ALTER TABLE "engine"."run" ALTER COLUMN "steps" SET COMPRESSION lz4;
  ALTER TABLE "engine"."run_step" ALTER COLUMN "step" SET COMPRESSION lz4;
  ALTER TABLE "engine"."run_step" ALTER COLUMN "output" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$migration$;
