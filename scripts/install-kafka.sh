#!/usr/bin/env bash
# The Apache Kafka broker for tests and development (tools/kafka): the pinned release's jars from
# Maven Central, fetched by Maven only, into tools/kafka/lib (git-ignored). Idempotent: does nothing
# when the pinned version is there already. Tries Maven offline first (its local repository), so a
# machine that fetched once installs again without network. Without Java or Maven it says so and
# exits 0: the Kafka suites are then skipped with that reason (and fail under CI=true).
set -euo pipefail
cd "$(dirname "$0")/../tools/kafka"

version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' pom.xml)
if [ -f "lib/kafka_2.13-${version}.jar" ] && [ -f lib/.complete ] && [ "$(cat lib/.complete)" = "$version" ]; then
  echo "Kafka ${version}: tools/kafka/lib is up to date"
  exit 0
fi
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "Kafka ${version} not installed: needs java (17+) and mvn on PATH; the Kafka test suites will be skipped" >&2
  exit 0
fi

rm -rf lib.tmp
fetch() { mvn -B -q -Dstyle.color=never "$@" dependency:copy-dependencies -DoutputDirectory=lib.tmp -DincludeScope=runtime; }
if ! fetch -o >/dev/null 2>&1; then
  echo "Kafka ${version}: fetching the broker's jars from Maven Central (about 45 MB)"
  fetch
fi
echo "$version" > lib.tmp/.complete
rm -rf lib
mv lib.tmp lib
echo "Kafka ${version}: installed into tools/kafka/lib ($(ls lib/*.jar | wc -l) jars)"
