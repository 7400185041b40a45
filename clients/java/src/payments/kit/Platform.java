package payments.kit;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.LongSupplier;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import payments.kit.Callbacks.CallbackException;

/**
 * The platform's side: verifying the platform-level events the service
 * posts to {@code platform_events_url}, signed the Standard Webhooks way with
 * {@code platform_events_secret}. The merchant client is generated from
 * openapi/merchant.json, which does not hold these events, so their type is
 * written here and {@link #main} holds it to the published schema
 * (generated/openapi/platform-webhooks.json).
 */
public final class Platform {
    private Platform() {}

    /** {@code tenant_owner_invite}; {@code link} is secret: whoever holds it can become the owner. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record TenantOwnerInvite(
            @JsonProperty("event") String event,
            @JsonProperty("invitation_id") String invitationId,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("tenant_name") String tenantName,
            @JsonProperty("email") String email,
            @JsonProperty("role") String role,
            @JsonProperty("state") String state,
            @JsonProperty("reason") String reason,
            @JsonProperty("issued_by") String issuedBy,
            @JsonProperty("issued_at") String issuedAt,
            @JsonProperty("expires_at") String expiresAt,
            @JsonProperty("link") String link) {}

    /** What one currency's balance lines charged in a statement's period; amounts as decimal strings. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record BillingStatementTotals(
            @JsonProperty("currency_code") String currencyCode,
            @JsonProperty("deposit_count") long depositCount,
            @JsonProperty("deposit_amount") String depositAmount,
            @JsonProperty("deposit_fees") String depositFees,
            @JsonProperty("withdrawal_count") long withdrawalCount,
            @JsonProperty("withdrawal_amount") String withdrawalAmount,
            @JsonProperty("withdrawal_fees") String withdrawalFees,
            @JsonProperty("total_fees") String totalFees) {}

    /**
     * {@code billing_statement_issued}: a billing statement (a version of one) was issued, its PDF at
     * {@code documentUrl} with {@code documentSha256}; {@code supersedes} (optional, so not required below)
     * names the version it replaced.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record BillingStatementIssued(
            @JsonProperty("event") String event,
            @JsonProperty("statement_id") String statementId,
            @JsonProperty("number") String number,
            @JsonProperty("version") int version,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("tenant_name") String tenantName,
            @JsonProperty("billing_period") String billingPeriod,
            @JsonProperty("period_start") String periodStart,
            @JsonProperty("period_end") String periodEnd,
            @JsonProperty("issued_at") String issuedAt,
            @JsonProperty("totals") List<BillingStatementTotals> totals,
            @JsonProperty("document_url") String documentUrl,
            @JsonProperty("document_sha256") String documentSha256,
            @JsonProperty("document_bytes") long documentBytes,
            @JsonProperty("supersedes") String supersedes) {}

    /** The JSON names a record requires: every component but {@code supersedes}. */
    static List<String> jsonNames(Class<? extends Record> type) {
        List<String> names = new ArrayList<>();
        for (var c : type.getRecordComponents()) {
            try {
                JsonProperty p = type.getDeclaredField(c.getName()).getAnnotation(JsonProperty.class);
                String name = p != null ? p.value() : c.getName();
                if (!name.equals("supersedes")) names.add(name);
            } catch (NoSuchFieldException e) {
                throw new IllegalStateException(e);
            }
        }
        return names;
    }

    /**
     * Checks a platform event's Standard Webhooks signature under the
     * platform's secret, then returns it typed. Fields added later are
     * tolerated; a missing one is a 400.
     */
    public static Record verifyPlatformEvent(Map<String, List<String>> headers, byte[] body, String secret,
            long maxSkewSeconds, LongSupplier now) throws CallbackException {
        Callbacks.checkStandardSignature(headers, body, secret, maxSkewSeconds, now);
        ObjectMapper mapper = new ObjectMapper();
        JsonNode tree;
        try {
            tree = mapper.readTree(new String(body, StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new CallbackException("the body is not JSON: " + e.getMessage(), 400);
        }
        Class<? extends Record> type = switch (tree.path("event").asText()) {
            case "tenant_owner_invite" -> TenantOwnerInvite.class;
            case "billing_statement_issued" -> BillingStatementIssued.class;
            default -> throw new CallbackException("unknown platform event " + tree.path("event"), 400);
        };
        List<String> missing = new ArrayList<>();
        for (String name : jsonNames(type)) {
            if (tree.path(name).isMissingNode() || tree.path(name).isNull()) missing.add(name);
        }
        if (!missing.isEmpty()) throw new CallbackException("the event lacks " + String.join(", ", missing), 400);
        try {
            return mapper.treeToValue(tree, type);
        } catch (Exception e) {
            throw new CallbackException("the body is not the event: " + e.getMessage(), 400);
        }
    }

    /** {@code run.sh PlatformEvent DELIVERED.json SECRET PLATFORM-WEBHOOKS.json} */
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode schemas = mapper.readTree(Files.readString(Path.of(args[2]))).path("components").path("schemas");
        for (Class<? extends Record> type : List.of(TenantOwnerInvite.class, BillingStatementIssued.class,
                BillingStatementTotals.class)) {
            TreeSet<String> want = new TreeSet<>();
            schemas.path(type.getSimpleName()).path("required").forEach(n -> want.add(n.asText()));
            TreeSet<String> have = new TreeSet<>(jsonNames(type));
            if (!want.equals(have)) {
                System.out.println("java: " + type.getSimpleName() + " has " + have + ", the contract requires " + want);
                System.exit(1);
            }
        }
        JsonNode delivered = mapper.readTree(Files.readString(Path.of(args[0])));
        Map<String, List<String>> headers = new java.util.HashMap<>();
        delivered.path("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), List.of(e.getValue().asText())));
        String body = delivered.path("body").asText();
        String secret = args[1];
        LongSupplier now = () -> System.currentTimeMillis() / 1000;
        Record event = verifyPlatformEvent(headers, body.getBytes(StandardCharsets.UTF_8), secret, 300, now);
        String[][] refused = {{body + " ", secret}, {body, "whsec_" + "A".repeat(44)}};
        for (String[] c : refused) {
            try {
                verifyPlatformEvent(headers, c[0].getBytes(StandardCharsets.UTF_8), c[1], 300, now);
                System.out.println("java: a tampered body or another secret was accepted");
                System.exit(1);
            } catch (CallbackException e) {
                if (e.status != 401) throw e;
            }
        }
        String what;
        if (event instanceof TenantOwnerInvite invite) {
            what = "tenant_owner_invite " + invite.invitationId() + " for " + invite.email() + " (" + invite.reason() + ")";
        } else {
            BillingStatementIssued billed = (BillingStatementIssued) event;
            what = "billing_statement_issued " + billed.number() + " (" + billed.totals().size() + " currencies, PDF "
                    + billed.documentSha256().substring(0, 12) + "…)";
        }
        System.out.println("java: " + what + " verified; a tampered body and another secret refused");
    }
}
