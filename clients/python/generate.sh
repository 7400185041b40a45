#!/usr/bin/env bash
# Regenerates the Python client from openapi/merchant.json with the pinned
# openapi-python-client, in a virtualenv of its own (.venv, from PyPI).
set -euo pipefail
cd "$(dirname "$0")"
if ! .venv/bin/python -c 'import openapi_python_client, standardwebhooks' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
fi
rm -rf generated
mkdir -p generated
.venv/bin/openapi-python-client generate --path ../../openapi/merchant.json --config generator.yaml \
  --output-path generated/payments_merchant_client --overwrite --meta none > generated/generate.log 2>&1 ||
  { cat generated/generate.log; exit 1; }
# The generator warns about its formatting hook (none is configured) and
# nothing else; any other warning means a piece of the client is missing.
if grep -v -e '^Generating' -e 'ruff' -e 'Skipping Integration' -e '^\s*$' -e 'Warning(s) encountered' \
    -e 'If you believe this was a mistake' -e 'openapi-python-client/issues' generated/generate.log | grep -q .; then
  cat generated/generate.log; echo "python: the generator left something out"; exit 1
fi
echo "python: generated/payments_merchant_client from openapi/merchant.json (openapi-python-client $(.venv/bin/openapi-python-client --version | awk '{print $NF}'))"
