#!/usr/bin/env bash
# Runs openapi-generator 7.26.0 (the Go and Java kits' generator) from PyPI's
# openapi-generator-cli, which carries the generator's jar, in a virtualenv
# of its own; a Java runtime comes from Debian's default-jdk-headless.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v java > /dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jdk-headless > /dev/null ||
    { apt-get update > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jdk-headless > /dev/null; }
fi
venv="$here/.openapi-generator"
if ! "$venv/bin/openapi-generator-cli" version > /dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check openapi-generator-cli==7.26.0
fi
exec "$venv/bin/openapi-generator-cli" "$@"
