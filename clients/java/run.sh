#!/usr/bin/env bash
# run.sh Vectors FILE | run.sh Smoke | run.sh PlatformEvent DELIVERED SECRET DOCUMENT: runs a kit program (after generate.sh).
set -euo pipefail
cd "$(dirname "$0")"
. ./classpath.sh
case "$1" in
  Vectors) main=payments.kit.Vectors ;;
  Smoke) main=payments.smoke.Smoke ;;
  PlatformEvent) main=payments.kit.Platform ;;
  *) echo "run.sh: Vectors, Smoke or PlatformEvent" >&2; exit 2 ;;
esac
shift
exec java -cp "build/classes:build/generated:$DEPS" "$main" "$@"
