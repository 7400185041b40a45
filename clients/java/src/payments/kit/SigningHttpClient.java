package payments.kit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * An {@link HttpClient} that signs every request before its delegate sends
 * it. The generated client (openapi-generator's {@code native} library) takes
 * a builder: {@code apiClient.setHttpClientBuilder(SigningHttpClient.builder(apiKey))}.
 */
public final class SigningHttpClient extends HttpClient {
    private final HttpClient delegate;
    private final String apiKey;
    private final LongSupplier now;

    public SigningHttpClient(HttpClient delegate, String apiKey, LongSupplier now) {
        this.delegate = delegate;
        this.apiKey = apiKey;
        this.now = now;
    }

    /** A builder for {@code ApiClient.setHttpClientBuilder}; {@code now} gives Unix seconds. */
    public static HttpClient.Builder builder(String apiKey, LongSupplier now) {
        return new Builder(HttpClient.newBuilder(), apiKey, now);
    }

    public static HttpClient.Builder builder(String apiKey) {
        return builder(apiKey, () -> System.currentTimeMillis() / 1000);
    }

    /** The request with x-api-key, x-timestamp and x-signature set. */
    public HttpRequest sign(HttpRequest request) {
        byte[] body = bodyOf(request);
        List<Signing.Field> fields = request.method().equals("GET") || body.length == 0
                ? Signing.urlFields(request.uri())
                : Signing.bodyFields(new String(body, StandardCharsets.UTF_8));
        return HttpRequest.newBuilder(request, (name, value) -> true)
                .setHeader("x-api-key", apiKey)
                .setHeader("x-timestamp", Long.toString(now.getAsLong()))
                .setHeader("x-signature", Signing.sign(fields, apiKey))
                .build();
    }

    private static byte[] bodyOf(HttpRequest request) {
        Optional<HttpRequest.BodyPublisher> publisher = request.bodyPublisher();
        if (publisher.isEmpty()) return new byte[0];
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Void> done = new CompletableFuture<>();
        publisher.get().subscribe(new Flow.Subscriber<ByteBuffer>() {
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            public void onNext(ByteBuffer b) {
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                out.write(chunk, 0, chunk.length);
            }

            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            public void onComplete() {
                done.complete(null);
            }
        });
        done.join();
        return out.toByteArray();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        return delegate.send(sign(request), handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return delegate.sendAsync(sign(request), handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
            HttpResponse.PushPromiseHandler<T> push) {
        return delegate.sendAsync(sign(request), handler, push);
    }

    @Override public Optional<CookieHandler> cookieHandler() { return delegate.cookieHandler(); }
    @Override public Optional<Duration> connectTimeout() { return delegate.connectTimeout(); }
    @Override public Redirect followRedirects() { return delegate.followRedirects(); }
    @Override public Optional<ProxySelector> proxy() { return delegate.proxy(); }
    @Override public SSLContext sslContext() { return delegate.sslContext(); }
    @Override public SSLParameters sslParameters() { return delegate.sslParameters(); }
    @Override public Optional<Authenticator> authenticator() { return delegate.authenticator(); }
    @Override public Version version() { return delegate.version(); }
    @Override public Optional<Executor> executor() { return delegate.executor(); }

    private static final class Builder implements HttpClient.Builder {
        private final HttpClient.Builder inner;
        private final String apiKey;
        private final LongSupplier now;

        Builder(HttpClient.Builder inner, String apiKey, LongSupplier now) {
            this.inner = inner;
            this.apiKey = apiKey;
            this.now = now;
        }

        @Override public HttpClient.Builder cookieHandler(CookieHandler h) { inner.cookieHandler(h); return this; }
        @Override public HttpClient.Builder connectTimeout(Duration d) { inner.connectTimeout(d); return this; }
        @Override public HttpClient.Builder sslContext(SSLContext c) { inner.sslContext(c); return this; }
        @Override public HttpClient.Builder sslParameters(SSLParameters p) { inner.sslParameters(p); return this; }
        @Override public HttpClient.Builder executor(Executor e) { inner.executor(e); return this; }
        @Override public HttpClient.Builder followRedirects(Redirect r) { inner.followRedirects(r); return this; }
        @Override public HttpClient.Builder version(Version v) { inner.version(v); return this; }
        @Override public HttpClient.Builder priority(int p) { inner.priority(p); return this; }
        @Override public HttpClient.Builder proxy(ProxySelector p) { inner.proxy(p); return this; }
        @Override public HttpClient.Builder authenticator(Authenticator a) { inner.authenticator(a); return this; }
        @Override public HttpClient build() { return new SigningHttpClient(inner.build(), apiKey, now); }
    }
}
