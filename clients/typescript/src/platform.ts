// The platform's side: verifying the platform-level events the service
// posts to `platform_events_url`, signed the Standard Webhooks way with
// `platform_events_secret`. Their types are generated from
// generated/openapi/platform-webhooks.json (src/generated/platform.ts).
//
// `node dist/src/platform.js DELIVERED.json SECRET` verifies a delivered
// event ({"headers": {...}, "body": "<raw text>"}).

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Webhook } from "standardwebhooks";
import type { components } from "./generated/platform.js";
import { CallbackError, checkStandardSignature, type HeaderSource, type VerifyOptions } from "./callbacks.js";

/** `tenant_owner_invite`; `link` is secret: whoever holds it can become the owner. */
export type TenantOwnerInvite = components["schemas"]["TenantOwnerInvite"];
/** `billing_statement_issued`; the PDF is at `document_url`, its SHA-256 `document_sha256`. */
export type BillingStatementIssued = components["schemas"]["BillingStatementIssued"];
export type PlatformEvent = TenantOwnerInvite | BillingStatementIssued;

const REQUIRED = [
  "event",
  "invitation_id",
  "tenant_id",
  "tenant_name",
  "email",
  "role",
  "state",
  "reason",
  "issued_by",
  "issued_at",
  "expires_at",
  "link",
] as const satisfies ReadonlyArray<keyof TenantOwnerInvite>;
// Compiles only while REQUIRED names every field of the generated type.
const everyField: [Exclude<keyof TenantOwnerInvite, (typeof REQUIRED)[number]>] extends [never] ? true : false = true;
void everyField;

/** What each field of `billing_statement_issued` must be; `supersedes` is optional. */
const BILLING_KINDS = {
  event: "string",
  statement_id: "string",
  number: "string",
  version: "number",
  tenant_id: "string",
  tenant_name: "string",
  billing_period: "string",
  period_start: "string",
  period_end: "string",
  issued_at: "string",
  totals: "object",
  document_url: "string",
  document_sha256: "string",
  document_bytes: "number",
} as const satisfies Partial<Record<keyof BillingStatementIssued, string>>;
// Compiles only while BILLING_KINDS names every required field.
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
const everyBillingField: [
  Exclude<Exclude<keyof BillingStatementIssued, OptionalKeys<BillingStatementIssued>>, keyof typeof BILLING_KINDS>,
] extends [never]
  ? true
  : false = true;
void everyBillingField;

/**
 * Checks a platform event's Standard Webhooks signature under the
 * platform's secret, then returns it typed. Fields added later are
 * tolerated; a missing one is a 400.
 */
export function verifyPlatformEvent(
  headers: HeaderSource,
  rawBody: string,
  secret: string,
  options: VerifyOptions = {},
): PlatformEvent {
  checkStandardSignature(headers, rawBody, secret, options);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(rawBody) as Record<string, unknown>;
  } catch (e) {
    throw new CallbackError(`the body is not JSON: ${(e as Error).message}`, 400);
  }
  if (body.event === "billing_statement_issued") {
    const missing = Object.entries(BILLING_KINDS)
      .filter(([k, kind]) => typeof body[k] !== kind || body[k] === null)
      .map(([k]) => k);
    if (!Array.isArray(body.totals)) missing.push("totals");
    if (missing.length > 0) throw new CallbackError(`the event lacks ${missing.join(", ")}`, 400);
    return body as unknown as BillingStatementIssued;
  }
  if (body.event !== "tenant_owner_invite") {
    throw new CallbackError(`unknown platform event ${String(body.event)}`, 400);
  }
  const missing = REQUIRED.filter((k) => typeof body[k] !== "string");
  if (missing.length > 0) throw new CallbackError(`the event lacks ${missing.join(", ")}`, 400);
  return body as unknown as TenantOwnerInvite;
}

function main(deliveredPath: string, secret: string): void {
  const delivered = JSON.parse(readFileSync(deliveredPath, "utf8")) as {
    headers: Record<string, string>;
    body: string;
  };
  const event = verifyPlatformEvent(delivered.headers, delivered.body, secret);
  for (const [body, key] of [
    [delivered.body + " ", secret],
    [delivered.body, "whsec_" + "A".repeat(44)],
  ] as const) {
    try {
      verifyPlatformEvent(delivered.headers, body, key);
      throw new Error("typescript: a tampered body or another secret was accepted");
    } catch (e) {
      if (!(e instanceof CallbackError) || e.status !== 401) throw e;
    }
  }
  // The specification's own package agrees.
  new Webhook(secret).verify(delivered.body, delivered.headers);
  const what =
    event.event === "tenant_owner_invite"
      ? `tenant_owner_invite ${event.invitation_id} for ${event.email} (${event.reason})`
      : `billing_statement_issued ${event.number} (${
          event.totals.map((t) => `${t.total_fees} ${t.currency_code}`).join(", ") || "no fees"
        }, PDF ${event.document_sha256.slice(0, 12)}…)`;
  console.log(`typescript: ${what} verified, as by the standardwebhooks package; a tampered body and another secret refused`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv[2] ?? "", process.argv[3] ?? "");
}
