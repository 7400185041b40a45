package payments.kit;

import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Checks the signing helper against every published signing vector. */
public final class Vectors {
    public static void main(String[] args) throws Exception {
        JsonNode doc = new ObjectMapper().readTree(new File(args.length > 0 ? args[0] : "../../openapi/signing-test-vectors.json"));
        int failed = 0, total = 0;
        for (JsonNode v : doc.get("vectors")) {
            total++;
            List<Signing.Field> fields;
            if (v.has("body")) {
                fields = Signing.bodyFields(v.get("body").asText());
            } else if (v.has("path")) {
                // As the signing client sees the request: its URL, matched
                // against the path templates, and its query.
                fields = Signing.urlFields(URI.create("http://x" + v.get("path").asText()));
            } else {
                fields = new ArrayList<>();
                for (Map.Entry<String, JsonNode> e : (Iterable<Map.Entry<String, JsonNode>>) () -> v.path("params").fields()) {
                    fields.add(new Signing.Field(e.getKey(), e.getValue().asText()));
                }
            }
            String canonical = Signing.canonical(fields);
            String signature = Signing.sign(fields, v.get("api_key").asText());
            boolean ok = canonical.equals(v.get("canonical").asText()) && signature.equals(v.get("signature").asText());
            if (!ok) failed++;
            System.out.println((ok ? "ok   " : "FAIL ") + v.get("description").asText()
                    + (ok ? "" : "\n     canonical " + canonical + "\n     signature " + signature));
        }
        System.out.println("java: " + (total - failed) + " of " + total + " signing vectors agree");
        System.exit(failed == 0 ? 0 : 1);
    }
}
