// Request signing for the merchant API, as its description defines it:
// the signed fields are the top-level fields of a POST's JSON body, or the
// path and query parameters of a GET; sorted by key (ASCII), joined as
// `k1=v1&k2=v2`, the API key appended, MD5 in lowercase hex.
//
// A number signs as the text that was sent (`100.50`, not `100.5`), so the
// body is read as text here, never through JSON.parse and back.

import { createHash, timingSafeEqual } from "node:crypto";
import type { Middleware } from "openapi-fetch";

export class SigningError extends Error {}

/** One signed field: its key and the text it contributes. */
export type Field = [key: string, value: string];

/** The top-level fields of a JSON object body, each as the text it signs. */
export function bodyFields(body: string): Field[] {
  const fields: Field[] = [];
  const seen = new Set<string>();
  let i = skipSpace(body, 0);
  if (body[i] !== "{") throw new SigningError("the body is not a JSON object");
  i = skipSpace(body, i + 1);
  if (body[i] === "}") return fields;
  for (;;) {
    if (body[i] !== '"') throw new SigningError("expected a key");
    const keyEnd = stringEnd(body, i);
    const key = JSON.parse(body.slice(i, keyEnd)) as string;
    if (seen.has(key)) throw new SigningError(`the body repeats the key ${key}`);
    seen.add(key);
    i = skipSpace(body, keyEnd);
    if (body[i] !== ":") throw new SigningError("expected ':'");
    i = skipSpace(body, i + 1);
    const end = valueEnd(body, i);
    const raw = body.slice(i, end);
    const text = fieldText(raw);
    if (text !== null) fields.push([key, text]);
    i = skipSpace(body, end);
    if (body[i] === ",") {
      i = skipSpace(body, i + 1);
      continue;
    }
    if (body[i] === "}") return fields;
    throw new SigningError("expected ',' or '}'");
  }
}

/** The text a raw JSON value contributes, or null when it is skipped. */
function fieldText(raw: string): string | null {
  const first = raw[0];
  if (first === '"') return JSON.parse(raw) as string;
  if (first === "{" || first === "[") return withoutSpaceOutsideStrings(raw);
  if (raw === "null") return null;
  return raw;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && " \t\n\r".includes(s[i] as string)) i++;
  return i;
}

/** Index just past the string starting at `i` (which is a quote). */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === "\\") j++;
    else if (s[j] === '"') return j + 1;
  }
  throw new SigningError("unterminated string");
}

function valueEnd(s: string, i: number): number {
  const first = s[i];
  if (first === '"') return stringEnd(s, i);
  if (first === "{" || first === "[") {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (c === '"') j = stringEnd(s, j) - 1;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new SigningError("unterminated value");
  }
  let j = i;
  while (j < s.length && !",} \t\n\r".includes(s[j] as string)) j++;
  if (j === i) throw new SigningError("expected a value");
  return j;
}

function withoutSpaceOutsideStrings(raw: string): string {
  let out = "";
  for (let j = 0; j < raw.length; j++) {
    const c = raw[j] as string;
    if (c === '"') {
      const end = stringEnd(raw, j);
      out += raw.slice(j, end);
      j = end - 1;
    } else if (!" \t\n\r".includes(c)) {
      out += c;
    }
  }
  return out;
}

/** `k1=v1&k2=v2`, keys in ascending order of their UTF-8 bytes. */
export function canonical(fields: Iterable<Field>): string {
  return [...fields]
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/** The signature of `fields` under `apiKey`: lowercase hex MD5. */
export function sign(fields: Iterable<Field>, apiKey: string): string {
  return createHash("md5").update(canonical(fields) + apiKey, "utf8").digest("hex");
}

/** Compares two signatures in constant time, ignoring case. */
export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a.toLowerCase(), "utf8");
  const y = Buffer.from(b.toLowerCase(), "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The fields of a GET: its path parameters by name, then its query. */
export function paramFields(params: {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
}): Field[] {
  const fields: Field[] = [];
  for (const group of [params.path, params.query]) {
    for (const [k, v] of Object.entries(group ?? {})) {
      if (v !== undefined && v !== null) fields.push([k, String(v)]);
    }
  }
  return fields;
}

/**
 * An openapi-fetch middleware that signs every request: add it with
 * `client.use(signRequests(apiKey))`. `now` gives Unix seconds (a clock
 * you control in tests).
 */
export function signRequests(
  apiKey: string,
  now: () => number = () => Math.floor(Date.now() / 1000),
): Middleware {
  return {
    async onRequest({ request, params }) {
      const body = request.method === "GET" ? null : await request.clone().text();
      const fields = body ? bodyFields(body) : paramFields(params);
      request.headers.set("x-api-key", apiKey);
      request.headers.set("x-timestamp", String(now()));
      request.headers.set("x-signature", sign(fields, apiKey));
      return request;
    },
  };
}
