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

    /** The JSON names of the record's components: a record component's annotation lands on its field. */
    private static List<String> jsonNames() {
        List<String> names = new ArrayList<>();
        for (var c : TenantOwnerInvite.class.getRecordComponents()) {
            try {
                JsonProperty p = TenantOwnerInvite.class.getDeclaredField(c.getName()).getAnnotation(JsonProperty.class);
                names.add(p != null ? p.value() : c.getName());
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
    public static TenantOwnerInvite verifyPlatformEvent(Map<String, List<String>> headers, byte[] body, String secret,
            long maxSkewSeconds, LongSupplier now) throws CallbackException {
        Callbacks.checkStandardSignature(headers, body, secret, maxSkewSeconds, now);
        ObjectMapper mapper = new ObjectMapper();
        JsonNode tree;
        try {
            tree = mapper.readTree(new String(body, StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new CallbackException("the body is not JSON: " + e.getMessage(), 400);
        }
        if (!"tenant_owner_invite".equals(tree.path("event").asText())) {
            throw new CallbackException("unknown platform event " + tree.path("event"), 400);
        }
        List<String> missing = new ArrayList<>();
        for (String name : jsonNames()) {
            if (!tree.path(name).isTextual()) missing.add(name);
        }
        if (!missing.isEmpty()) throw new CallbackException("the event lacks " + String.join(", ", missing), 400);
        try {
            return mapper.treeToValue(tree, TenantOwnerInvite.class);
        } catch (Exception e) {
            throw new CallbackException("the body is not the event: " + e.getMessage(), 400);
        }
    }

    /** {@code run.sh PlatformEvent DELIVERED.json SECRET PLATFORM-WEBHOOKS.json} */
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode required = mapper.readTree(Files.readString(Path.of(args[2])))
                .path("components").path("schemas").path("TenantOwnerInvite").path("required");
        TreeSet<String> want = new TreeSet<>();
        required.forEach(n -> want.add(n.asText()));
        TreeSet<String> have = new TreeSet<>(jsonNames());
        if (!want.equals(have)) {
            System.out.println("java: TenantOwnerInvite has " + have + ", the contract requires " + want);
            System.exit(1);
        }
        JsonNode delivered = mapper.readTree(Files.readString(Path.of(args[0])));
        Map<String, List<String>> headers = new java.util.HashMap<>();
        delivered.path("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), List.of(e.getValue().asText())));
        String body = delivered.path("body").asText();
        String secret = args[1];
        LongSupplier now = () -> System.currentTimeMillis() / 1000;
        TenantOwnerInvite event = verifyPlatformEvent(headers, body.getBytes(StandardCharsets.UTF_8), secret, 300, now);
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
        System.out.println("java: tenant_owner_invite " + event.invitationId() + " for " + event.email() + " ("
                + event.reason() + ") verified; a tampered body and another secret refused");
    }
}
