#!/usr/bin/env bash
# run.sh Vectors FILE | run.sh Smoke: runs a kit program (after generate.sh).
set -euo pipefail
cd "$(dirname "$0")"
. ./classpath.sh
case "$1" in
  Vectors) main=payments.kit.Vectors ;;
  Smoke) main=payments.smoke.Smoke ;;
  *) echo "run.sh: Vectors or Smoke" >&2; exit 2 ;;
esac
shift
exec java -cp "build/classes:build/generated:$DEPS" "$main" "$@"
