#!/usr/bin/env bash
# Regenerates the Go client from openapi/merchant.json with the pinned
# openapi-generator (../openapi-generator.sh), then builds the kit and its
# programs against it. Go and the one module the client imports come from
# Debian's packages (golang-go, golang-gopkg-validator.v2-dev).
set -euo pipefail
cd "$(dirname "$0")"
debian() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" > /dev/null ||
    { apt-get update > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" > /dev/null; }
}
command -v go > /dev/null || debian golang-go
[ -f /usr/share/gocode/src/gopkg.in/validator.v2/validator.go ] || debian golang-gopkg-validator.v2-dev

rm -rf generated
# Amounts: `format: decimal` would become float32/float64; as strings they
# stay exact (requests take decimal strings, responses are strings).
# Enum constants are prefixed by their type, or the status enums collide.
../openapi-generator.sh generate -i ../../openapi/merchant.json -g go -o generated \
  --package-name merchant --git-host payments.example --git-user-id x --git-repo-id merchant \
  --type-mappings=string+decimal=string,number+decimal=string \
  --additional-properties=enumClassPrefix=true,withGoMod=true,isGoSubmodule=false \
  > generated.log 2>&1 || { cat generated.log; exit 1; }
mv generated.log generated/
rm -rf generated/test
sed -i -e 's#^module .*#module payments.example/merchant#' -e 's/^go 1\..*/go 1.19/' generated/go.mod
mkdir -p generated/_deps
cp -r /usr/share/gocode/src/gopkg.in/validator.v2 generated/_deps/
rm -f generated/_deps/validator.v2/*_test.go
printf 'module gopkg.in/validator.v2\n\ngo 1.19\n' > generated/_deps/validator.v2/go.mod
echo 'replace gopkg.in/validator.v2 => ./_deps/validator.v2' >> generated/go.mod
export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
(cd generated && go build ./...)
(cd kit && go vet ./... && go build -o ../bin/ ./cmd/...)
echo "go: generated/ from openapi/merchant.json (openapi-generator $(../openapi-generator.sh version)), kit built"
