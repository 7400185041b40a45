// Verifying the callbacks the service posts, then reading them as the
// generated event types. Give the raw body as received: the signature
// covers the text of its numbers, which JSON.parse does not keep.

import { createHmac, timingSafeEqual } from "node:crypto";
import type { components } from "./generated/merchant.js";
import { bodyFields, sameSignature, sign } from "./signing.js";

export type DepositEvent = components["schemas"]["DepositEvent"];
export type WithdrawalEvent = components["schemas"]["WithdrawalEvent"];
/** Any callback; `event` narrows it (`"deposit.completed"`, ...). */
export type CallbackEvent = DepositEvent | WithdrawalEvent;

/** The events this kit was generated with, from the spec's discriminator mappings. */
export const EVENTS: ReadonlyArray<CallbackEvent["event"]> = [
  "deposit.matched",
  "deposit.completed",
  "deposit.expired",
  "deposit.cancelled",
  "withdrawal.approved",
  "withdrawal.completed",
  "withdrawal.rejected",
  "withdrawal.failed",
];

export class CallbackError extends Error {
  constructor(
    message: string,
    /** What to answer the service: 401 for a failed check, 400 for a body that is not an event. */
    readonly status: 400 | 401,
  ) {
    super(message);
  }
}

export interface VerifyOptions {
  /** Refuse a callback whose `X-Timestamp` is further than this from `now`. */
  maxSkewSeconds?: number;
  /** Unix seconds; defaults to the system clock. */
  now?: () => number;
}

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/**
 * Checks a callback's key, timestamp (if asked) and signature, then returns
 * it as a typed event. Throws a CallbackError naming what failed.
 */
export function verifyCallback(
  headers: HeaderSource,
  rawBody: string,
  apiKey: string,
  options: VerifyOptions = {},
): CallbackEvent {
  const sentKey = header(headers, "x-api-key");
  const timestamp = header(headers, "x-timestamp");
  const signature = header(headers, "x-signature");
  if (sentKey === undefined || timestamp === undefined || signature === undefined) {
    throw new CallbackError("a signing header is missing", 401);
  }
  const a = Buffer.from(sentKey, "utf8");
  const b = Buffer.from(apiKey, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new CallbackError("the callback is for another API key", 401);
  }
  if (!/^-?[0-9]+$/.test(timestamp)) throw new CallbackError("X-Timestamp is not Unix seconds", 401);
  if (options.maxSkewSeconds !== undefined) {
    const now = (options.now ?? (() => Math.floor(Date.now() / 1000)))();
    if (Math.abs(now - Number(timestamp)) > options.maxSkewSeconds) {
      throw new CallbackError("X-Timestamp is outside the tolerated window", 401);
    }
  }
  let fields;
  try {
    fields = bodyFields(rawBody);
  } catch (e) {
    throw new CallbackError(`the body is not a JSON object: ${(e as Error).message}`, 400);
  }
  if (!sameSignature(sign(fields, apiKey), signature)) {
    throw new CallbackError("the signature does not match the body", 401);
  }
  const body = JSON.parse(rawBody) as { event?: unknown };
  if (!EVENTS.includes(body.event as CallbackEvent["event"])) {
    throw new CallbackError(`unknown event ${String(body.event)}`, 400);
  }
  return body as CallbackEvent;
}

/**
 * The Standard Webhooks check, for a merchant's callbacks and the
 * platform's events alike: throws a CallbackError (401) if it fails.
 */
export function checkStandardSignature(
  headers: HeaderSource,
  rawBody: string,
  secret: string,
  options: VerifyOptions = {},
): void {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new CallbackError("a Standard Webhooks header is missing", 401);
  }
  if (!/^[0-9]+$/.test(timestamp)) throw new CallbackError("webhook-timestamp is not Unix seconds", 401);
  const now = (options.now ?? (() => Math.floor(Date.now() / 1000)))();
  if (Math.abs(now - Number(timestamp)) > (options.maxSkewSeconds ?? 300)) {
    throw new CallbackError("webhook-timestamp is outside the tolerated window", 401);
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = Buffer.from(
    createHmac("sha256", key).update(`${id}.${timestamp}.${rawBody}`, "utf8").digest("base64"),
    "utf8",
  );
  // Every offered signature is compared, so the time taken does not say which matched.
  const matched = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "utf8"))
    .map((s) => s.length === expected.length && timingSafeEqual(s, expected));
  if (!matched.includes(true)) throw new CallbackError("no signature matches the body", 401);
}

/**
 * Checks a callback of a merchant on the `standard_webhooks` scheme
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`: any one `v1`
 * signature of `{id}.{timestamp}.{body}` under the callback secret
 * `whsec_...`), then returns it as a typed event. The `standardwebhooks`
 * package from npm does the same check; this one needs only node:crypto.
 */
export function verifyStandardCallback(
  headers: HeaderSource,
  rawBody: string,
  secret: string,
  options: VerifyOptions = {},
): CallbackEvent {
  checkStandardSignature(headers, rawBody, secret, options);
  let body: { event?: unknown };
  try {
    body = JSON.parse(rawBody) as { event?: unknown };
  } catch (e) {
    throw new CallbackError(`the body is not JSON: ${(e as Error).message}`, 400);
  }
  if (!EVENTS.includes(body.event as CallbackEvent["event"])) {
    throw new CallbackError(`unknown event ${String(body.event)}`, 400);
  }
  return body as CallbackEvent;
}
