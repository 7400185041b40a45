// Checks the signing helper against every published signing vector:
// `node dist/src/vectors.js ../../openapi/signing-test-vectors.json`.

import { readFileSync } from "node:fs";
import { bodyFields, canonical, sign, type Field } from "./signing.js";

interface Vector {
  description: string;
  body?: string;
  params?: Record<string, string>;
  path?: string;
  api_key: string;
  canonical: string;
  signature: string;
}

const file = process.argv[2] ?? "../../openapi/signing-test-vectors.json";
const { vectors } = JSON.parse(readFileSync(file, "utf8")) as { vectors: Vector[] };
let failed = 0;
for (const v of vectors) {
  let fields: Field[];
  // openapi-fetch hands the middleware a GET's parameters by name, which
  // is what `params` gives; a body is signed from its text.
  if (v.body !== undefined) fields = bodyFields(v.body);
  else fields = Object.entries(v.params ?? {});
  const got = canonical(fields);
  const signature = sign(fields, v.api_key);
  const ok = got === v.canonical && signature === v.signature;
  if (!ok) failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${v.description}${ok ? "" : `\n     canonical ${got}\n     signature ${signature}`}`);
}
console.log(`typescript: ${vectors.length - failed} of ${vectors.length} signing vectors agree`);
process.exit(failed === 0 ? 0 : 1);
