package payments.kit;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Request signing, as the merchant API's description defines it: the signed
 * fields are the top-level fields of a POST's JSON body, or the path and
 * query parameters of a GET; sorted by key, joined as {@code k1=v1&k2=v2},
 * the API key appended, MD5 in lowercase hex.
 *
 * <p>A number signs as the text that was sent ({@code 100.50}, not
 * {@code 100.5}), so the body is read as text here, never parsed and
 * written back.
 */
public final class Signing {
    private Signing() {}

    /** One signed field: its key and the text it contributes. */
    public record Field(String key, String value) {}

    public static final class SigningException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        public SigningException(String message) {
            super(message);
        }
    }

    private static final String SPACE = " \t\n\r";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The top-level fields of a JSON object body, each as the text it signs. */
    public static List<Field> bodyFields(String body) {
        List<Field> fields = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int i = skip(body, 0);
        if (i >= body.length() || body.charAt(i) != '{') throw new SigningException("the body is not a JSON object");
        i = skip(body, i + 1);
        if (i < body.length() && body.charAt(i) == '}') return fields;
        while (true) {
            if (i >= body.length() || body.charAt(i) != '"') throw new SigningException("expected a key");
            int end = stringEnd(body, i);
            String key = unquote(body.substring(i, end));
            if (!seen.add(key)) throw new SigningException("the body repeats the key " + key);
            i = skip(body, end);
            if (i >= body.length() || body.charAt(i) != ':') throw new SigningException("expected ':'");
            i = skip(body, i + 1);
            end = valueEnd(body, i);
            String raw = body.substring(i, end);
            char first = raw.charAt(0);
            if (first == '"') fields.add(new Field(key, unquote(raw)));
            else if (first == '{' || first == '[') fields.add(new Field(key, withoutSpace(raw)));
            else if (!raw.equals("null")) fields.add(new Field(key, raw));
            i = skip(body, end);
            if (i < body.length() && body.charAt(i) == ',') {
                i = skip(body, i + 1);
                continue;
            }
            if (i < body.length() && body.charAt(i) == '}') return fields;
            throw new SigningException("expected ',' or '}'");
        }
    }

    private static String unquote(String quoted) {
        try {
            return JSON.readValue(quoted, String.class);
        } catch (Exception e) {
            throw new SigningException("a string is not valid JSON");
        }
    }

    private static int skip(String s, int i) {
        while (i < s.length() && SPACE.indexOf(s.charAt(i)) >= 0) i++;
        return i;
    }

    private static int stringEnd(String s, int i) {
        for (int j = i + 1; j < s.length(); j++) {
            char c = s.charAt(j);
            if (c == '\\') j++;
            else if (c == '"') return j + 1;
        }
        throw new SigningException("unterminated string");
    }

    private static int valueEnd(String s, int i) {
        if (i >= s.length()) throw new SigningException("expected a value");
        char first = s.charAt(i);
        if (first == '"') return stringEnd(s, i);
        if (first == '{' || first == '[') {
            int depth = 0;
            for (int j = i; j < s.length(); j++) {
                char c = s.charAt(j);
                if (c == '"') j = stringEnd(s, j) - 1;
                else if (c == '{' || c == '[') depth++;
                else if (c == '}' || c == ']') {
                    if (--depth == 0) return j + 1;
                }
            }
            throw new SigningException("unterminated value");
        }
        int j = i;
        while (j < s.length() && ",}".indexOf(s.charAt(j)) < 0 && SPACE.indexOf(s.charAt(j)) < 0) j++;
        if (j == i) throw new SigningException("expected a value");
        return j;
    }

    private static String withoutSpace(String raw) {
        StringBuilder out = new StringBuilder();
        for (int j = 0; j < raw.length(); j++) {
            char c = raw.charAt(j);
            if (c == '"') {
                int end = stringEnd(raw, j);
                out.append(raw, j, end);
                j = end - 1;
            } else if (SPACE.indexOf(c) < 0) {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** {@code k1=v1&k2=v2}, keys in ascending order of their UTF-8 bytes. */
    public static String canonical(List<Field> fields) {
        Comparator<Field> byBytes = (a, b) -> Arrays.compareUnsigned(
                a.key().getBytes(StandardCharsets.UTF_8), b.key().getBytes(StandardCharsets.UTF_8));
        return fields.stream().sorted(byBytes).map(f -> f.key() + "=" + f.value()).collect(Collectors.joining("&"));
    }

    /** The signature of {@code fields} under {@code apiKey}: lowercase hex MD5. */
    public static String sign(List<Field> fields, String apiKey) {
        try {
            byte[] digest = MessageDigest.getInstance("MD5")
                    .digest((canonical(fields) + apiKey).getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte b : digest) hex.append(String.format("%02x", b));
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Compares two signatures in constant time, ignoring case. */
    public static boolean sameSignature(String a, String b) {
        return MessageDigest.isEqual(a.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8),
                b.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The merchant API's GET paths with parameters: a GET signs its path
     * parameters by name, so the URL is matched against these.
     */
    public static final List<String> PATH_TEMPLATES = List.of(
            "/api/v1/merchant/query/deposit/{order_no}",
            "/api/v1/merchant/query/withdrawal/{order_no}",
            "/api/v1/merchant/statements/{date}",
            "/api/v1/merchant/billing-statements/{statement_id}",
            "/api/v1/merchant/billing-statements/{statement_id}/document");

    private static final Pattern PARAM = Pattern.compile("\\{([^}]+)\\}");

    /** A GET's fields: path parameters (by the template it matches) and the query, percent-decoded. */
    public static List<Field> urlFields(URI uri) {
        List<Field> fields = new ArrayList<>();
        String path = uri.getRawPath();
        for (String template : PATH_TEMPLATES) {
            List<String> names = new ArrayList<>();
            Matcher m = PARAM.matcher(template);
            StringBuilder regex = new StringBuilder("^");
            int last = 0;
            while (m.find()) {
                regex.append(Pattern.quote(template.substring(last, m.start()))).append("([^/]+)");
                names.add(m.group(1));
                last = m.end();
            }
            regex.append(Pattern.quote(template.substring(last))).append("$");
            Matcher p = Pattern.compile(regex.toString()).matcher(path);
            if (p.matches()) {
                for (int g = 0; g < names.size(); g++) {
                    fields.add(new Field(names.get(g), decode(p.group(g + 1).replace("+", "%2B"))));
                }
                break;
            }
        }
        String query = uri.getRawQuery();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                String k = eq < 0 ? pair : pair.substring(0, eq);
                String v = eq < 0 ? "" : pair.substring(eq + 1);
                fields.add(new Field(decode(k), decode(v)));
            }
        }
        return fields;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** Fields from a map (a GET's parameters by name). */
    public static List<Field> fieldsOf(Map<String, String> params) {
        return params.entrySet().stream().map(e -> new Field(e.getKey(), e.getValue())).collect(Collectors.toList());
    }
}
