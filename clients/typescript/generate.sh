#!/usr/bin/env bash
# Regenerates the TypeScript types from openapi/merchant.json with the
# pinned openapi-typescript (npm, from package-lock.json), then compiles
# the kit and its smoke suite against them.
set -euo pipefail
cd "$(dirname "$0")"
[ -x node_modules/.bin/openapi-typescript ] && [ -d node_modules/standardwebhooks ] || npm ci --no-audit --no-fund --loglevel=error
rm -rf src/generated dist
node_modules/.bin/openapi-typescript ../../openapi/merchant.json -o src/generated/merchant.ts > /dev/null
# The same events as OpenAPI 3.1 webhooks (derived by `cargo xtask codegen`).
node_modules/.bin/openapi-typescript ../../generated/openapi/merchant-webhooks.json -o src/generated/webhooks.ts > /dev/null
# The platform's events, for the platform's receiver (src/platform.ts).
node_modules/.bin/openapi-typescript ../../generated/openapi/platform-webhooks.json -o src/generated/platform.ts > /dev/null
node_modules/.bin/tsc -p .
echo "typescript: src/generated/merchant.ts from openapi/merchant.json (openapi-typescript $(node -p 'require("./node_modules/openapi-typescript/package.json").version')), kit and smoke suite compiled"
