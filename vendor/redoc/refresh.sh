#!/usr/bin/env bash
# Replaces the vendored Redoc bundle with the given version from the npm
# registry and prints the hashes README.md quotes.
set -euo pipefail
version=${1:?usage: refresh.sh <redoc version>}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "redoc@$version" > /dev/null && tar xzf redoc-*.tgz)
cp "$work/package/bundles/redoc.standalone.js" "$work/package/bundles/redoc.standalone.js.LICENSE.txt" "$here/"
cp "$work/package/LICENSE" "$here/LICENSE"
sha256sum "$work"/redoc-*.tgz "$here/redoc.standalone.js"
