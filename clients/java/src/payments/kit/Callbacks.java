package payments.kit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import payments.merchant.client.ApiClient;
import payments.merchant.model.DepositCancelledEvent;
import payments.merchant.model.DepositCompletedEvent;
import payments.merchant.model.DepositExpiredEvent;
import payments.merchant.model.DepositMatchedEvent;
import payments.merchant.model.WithdrawalApprovedEvent;
import payments.merchant.model.WithdrawalCompletedEvent;
import payments.merchant.model.WithdrawalFailedEvent;
import payments.merchant.model.WithdrawalRejectedEvent;

/**
 * Verifying the callbacks the service posts, then reading them as the
 * generated event models. Give the raw body as received: the signature
 * covers the text of its numbers.
 */
public final class Callbacks {
    private Callbacks() {}

    /** A callback that failed a check; {@code status} is what to answer (401, or 400 for a body that is not an event). */
    public static final class CallbackException extends Exception {
        private static final long serialVersionUID = 1L;

        public final int status;

        public CallbackException(String message, int status) {
            super(message);
            this.status = status;
        }
    }

    private static final Map<String, Class<?>> EVENTS = Map.of(
            "deposit.matched", DepositMatchedEvent.class,
            "deposit.completed", DepositCompletedEvent.class,
            "deposit.expired", DepositExpiredEvent.class,
            "deposit.cancelled", DepositCancelledEvent.class,
            "withdrawal.approved", WithdrawalApprovedEvent.class,
            "withdrawal.completed", WithdrawalCompletedEvent.class,
            "withdrawal.rejected", WithdrawalRejectedEvent.class,
            "withdrawal.failed", WithdrawalFailedEvent.class);

    static String header(Map<String, List<String>> headers, String name) {
        for (Map.Entry<String, List<String>> e : headers.entrySet()) {
            if (e.getKey() != null && e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) return e.getValue().get(0);
        }
        return null;
    }

    /**
     * Checks a callback's key, timestamp (if {@code maxSkewSeconds > 0}) and
     * signature, then returns it as its event's generated model
     * ({@code DepositCompletedEvent} and so on).
     */
    public static Object verify(Map<String, List<String>> headers, byte[] body, String apiKey, long maxSkewSeconds,
            LongSupplier now) throws CallbackException {
        String sentKey = header(headers, "x-api-key");
        String timestamp = header(headers, "x-timestamp");
        String signature = header(headers, "x-signature");
        if (sentKey == null || timestamp == null || signature == null) {
            throw new CallbackException("a signing header is missing", 401);
        }
        if (!MessageDigest.isEqual(sentKey.getBytes(StandardCharsets.UTF_8), apiKey.getBytes(StandardCharsets.UTF_8))) {
            throw new CallbackException("the callback is for another API key", 401);
        }
        long sentAt;
        try {
            sentAt = Long.parseLong(timestamp);
        } catch (NumberFormatException e) {
            throw new CallbackException("X-Timestamp is not Unix seconds", 401);
        }
        if (maxSkewSeconds > 0 && Math.abs(now.getAsLong() - sentAt) > maxSkewSeconds) {
            throw new CallbackException("X-Timestamp is outside the tolerated window", 401);
        }
        String text = new String(body, StandardCharsets.UTF_8);
        List<Signing.Field> fields;
        try {
            fields = Signing.bodyFields(text);
        } catch (Signing.SigningException e) {
            throw new CallbackException("the body is not a JSON object: " + e.getMessage(), 400);
        }
        if (!Signing.sameSignature(Signing.sign(fields, apiKey), signature)) {
            throw new CallbackException("the signature does not match the body", 401);
        }
        return decode(text);
    }

    /**
     * The Standard Webhooks check, for a merchant's callbacks and the
     * platform's events alike: throws a {@link CallbackException} (401) if it fails.
     */
    public static void checkStandardSignature(Map<String, List<String>> headers, byte[] body, String secret,
            long maxSkewSeconds, LongSupplier now) throws CallbackException {
        String id = header(headers, "webhook-id");
        String timestamp = header(headers, "webhook-timestamp");
        String signatures = header(headers, "webhook-signature");
        if (id == null || timestamp == null || signatures == null) {
            throw new CallbackException("a Standard Webhooks header is missing", 401);
        }
        long sentAt;
        try {
            sentAt = Long.parseLong(timestamp);
        } catch (NumberFormatException e) {
            throw new CallbackException("webhook-timestamp is not Unix seconds", 401);
        }
        if (Math.abs(now.getAsLong() - sentAt) > maxSkewSeconds) {
            throw new CallbackException("webhook-timestamp is outside the tolerated window", 401);
        }
        byte[] expected;
        try {
            byte[] key = Base64.getDecoder().decode(secret.startsWith("whsec_") ? secret.substring(6) : secret);
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
            expected = Base64.getEncoder().encode(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("the callback secret is not usable: " + e.getMessage());
        }
        // Every offered signature is compared, so the time taken does not say which matched.
        boolean matched = false;
        for (String s : signatures.split(" ")) {
            if (s.startsWith("v1,")) matched |= MessageDigest.isEqual(s.substring(3).getBytes(StandardCharsets.UTF_8), expected);
        }
        if (!matched) throw new CallbackException("no signature matches the body", 401);
    }

    /**
     * Checks a callback of a merchant on the {@code standard_webhooks} scheme
     * ({@code webhook-id}, {@code webhook-timestamp}, {@code webhook-signature}:
     * any one {@code v1} signature of {@code {id}.{timestamp}.{body}} under the
     * callback secret {@code whsec_...}), the timestamp within
     * {@code maxSkewSeconds} of {@code now}, then returns it as {@link #verify} does.
     */
    public static Object verifyStandard(Map<String, List<String>> headers, byte[] body, String secret,
            long maxSkewSeconds, LongSupplier now) throws CallbackException {
        checkStandardSignature(headers, body, secret, maxSkewSeconds, now);
        return decode(new String(body, StandardCharsets.UTF_8));
    }

    private static Object decode(String text) throws CallbackException {
        // The mapper the generated API classes read responses with: it
        // reads the decimal strings into BigDecimal.
        ObjectMapper mapper = ApiClient.createDefaultObjectMapper();
        try {
            JsonNode tree = mapper.readTree(text);
            Class<?> model = EVENTS.get(tree.path("event").asText());
            if (model == null) throw new CallbackException("unknown event " + tree.path("event"), 400);
            return mapper.readValue(text, model);
        } catch (CallbackException e) {
            throw e;
        } catch (Exception e) {
            throw new CallbackException("the body is not an event: " + e.getMessage(), 400);
        }
    }
}
