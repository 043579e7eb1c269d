#!/bin/sh
# The four bench:e2e measurements of issue 11, one after the other (README "Performance"):
#   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:e2e:suite
# Each prints runs/s, p50/p99 accepted → finished, CPU per run (services, Postgres, senders), the load
# average, and its target. Without DATABASE_URL: PGlite in memory (no Postgres CPU figure).
set -e
for args in "--runs 3000" "--runs 4000 --workflows 100" "--runs 3000 --http-latency 200 --connections 256" "--runs 5000 --rate 500"; do
  echo "=== npm run bench:e2e -- $args"
  node --conditions=source --import tsx bench/e2e-runs.ts $args
done
