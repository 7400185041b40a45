#!/usr/bin/env python3
"""The load side of .ci/scale-out: a stream of signed merchant requests and
operator moves through the balancer, an https callback receiver, and the
checks afterwards. Standard library only.

  scale_out.py stream  BASE OPERATOR_TOKEN SECONDS CERT KEY OUT.json
  scale_out.py check   BASE OPERATOR_TOKEN STREAM.json RELEASED
  scale_out.py limit   BASE OPERATOR_TOKEN
  scale_out.py allowlist BASE OPERATOR_TOKEN
  scale_out.py routing BASE OPERATOR_TOKEN INSTANCE_URL...
  scale_out.py latency API_BASE OPERATOR_TOKEN COUNT CERT KEY
  scale_out.py busy    COMMAND...
  scale_out.py first-attempts < METRICS

`stream` runs for SECONDS while the caller kills and restarts an instance;
it writes what was acknowledged and what the receiver got. `check` proves
every acknowledged order exists, every acknowledged move was called back,
no callback arrived twice except those an instance killed mid-attempt gave
back (RELEASED), and the ledger adds up. `limit` proves a merchant's limit
holds across the instances. `allowlist` proves a key restricted to one
client address is refused from another through HAProxy, with the address
the balancer forwarded, whatever `X-Forwarded-For` the client sends.
`routing` proves a routing table approved through the balancer (two admins)
is in force on every instance, each asked directly, within a second, and
that the audit trail holds the change. `latency` proves every callback committed on an
API-only instance arrives from a workers-only one and measures how soon
(a figure: timing bounds are the bench's, not CI's).
"""
import hashlib
import http.server
import json
import multiprocessing
import os
import queue as queue_module
import re
import resource
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

THREADS = 8


def call(method, url, body=None, headers=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, {"raw": text.decode(errors="replace")}
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
        return 0, {"error": str(e)}


class Merchant:
    def __init__(self, base, key):
        self.base, self.key = base, key

    def post(self, path, body):
        signing = "&".join(f"{k}={body[k]}" for k in sorted(body)) + self.key
        return call("POST", self.base + path, body, self.headers(signing))

    def get(self, path, params=None):
        params = params or {}
        signing = "&".join(f"{k}={params[k]}" for k in sorted(params)) + self.key
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return call("GET", self.base + path + ("?" + query if query else ""), None, self.headers(signing))

    def headers(self, signing):
        return {
            "x-api-key": self.key,
            "x-timestamp": str(int(time.time())),
            "x-signature": hashlib.md5(signing.encode()).hexdigest(),
        }


class Operator:
    def __init__(self, base, token):
        self.base, self.token = base, token
        self._people, self._making = None, threading.Lock()

    def __call__(self, method, path, body=None):
        return call(method, self.base + path, body if method in ("POST", "PUT") else None,
                    {"authorization": f"Bearer {self.token}"})

    def people(self):
        """A maker's and a checker's own tokens, made once: money recorded by
        hand is two people's (a change request and its approval)."""
        with self._making:
            if self._people is None:
                tokens = []
                for name in ("maker", "checker"):
                    status, made = self("POST", "/api/v1/operator/operators", {
                        "name": f"scale-out {name}", "role": "approver",
                        "email": f"{name}-{uuid.uuid4().hex}@example.test"})
                    assert status == 200, (status, made)
                    status, issued = self("POST", f"/api/v1/operator/operators/{made['operator_id']}/tokens",
                                          {"label": "scale-out"})
                    assert status == 200, (status, issued)
                    tokens.append(issued["token"])
                self._people = tokens
            return self._people

    def record_transfer(self, transfer):
        """A bank transfer filed by one person and approved by another:
        (status, the bank transaction as the approval answered it)."""
        maker, checker = self.people()
        parameters = dict(transfer, amount=str(transfer["amount"]))
        status, filed = call("POST", self.base + "/api/v1/operator/change-requests",
                             {"action": "ingest_bank_transaction", "parameters": parameters},
                             {"authorization": f"Bearer {maker}"})
        if status != 200:
            return status, filed
        status, approved = call(
            "POST", self.base + f"/api/v1/operator/change-requests/{filed['change_request_id']}/approve",
            {}, {"authorization": f"Bearer {checker}"})
        return (status, approved.get("result", {})) if status == 200 else (status, approved)

    def merchant(self, name):
        status, m = self("POST", "/api/v1/operator/merchants",
                         {"code": "so" + uuid.uuid4().hex[:12], "name": name})
        assert status == 200, (status, m)
        return m


class Receiver:
    """An https receiver: every callback's (order_no, event) and arrival.

    It runs in a process of its own, so that the load's threads (which
    hold Python's lock while they sign and send) never delay an arrival
    being seen; time.monotonic is the system's monotonic clock, the same
    in both processes."""

    def __init__(self, cert, key):
        ctx = multiprocessing.get_context("fork")
        self.queue = ctx.Queue()
        ready = ctx.Queue()
        self.process = ctx.Process(target=Receiver.serve, args=(cert, key, self.queue, ready),
                                   daemon=True)
        self.process.start()
        self.url = ready.get(timeout=10)
        self.arrivals = []

    @staticmethod
    def serve(cert, key, queue, ready):
        # The observer, not the observed: on two cores shared with the
        # database, the bouncer, both instances and the load, a receiver
        # scheduled late stamps an arrival late. Ahead of them in the run
        # queue (as root; as another user it stays as it was), it stamps
        # the arrival when the bytes arrive, and nothing the service does
        # changes.
        try:
            os.nice(-10)
        except PermissionError:
            pass
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                at = time.monotonic()
                try:
                    event = json.loads(body)
                    key = (event.get("order_no"), event.get("event"))
                except ValueError:
                    key = (None, None)
                queue.put((key, at))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        ready.put(f"https://localhost:{server.server_address[1]}/callback")
        server.serve_forever()

    def seen(self):
        while True:
            try:
                key, at = self.queue.get_nowait()
            except queue_module.Empty:
                return list(self.arrivals)
            self.arrivals.append((tuple(key), at))


def fund(merchant, op, receiver_url, name):
    """A deposit paid by a bank transfer: (order_no, acknowledged?)."""
    status, order = merchant.post("/api/v1/merchant/orders/deposit", {
        "merchant_order_no": name, "amount": 100, "currency_code": "THB",
        "callback_url": receiver_url})
    if status != 200:
        return None, False
    status, tx = op.record_transfer({
        "account_id": "acct-thb-1", "bank_reference": "REF-" + name, "amount": 100,
        "currency_code": "THB", "remark": order["remark"]})
    return order["order_no"], status == 200 and tx.get("deposit_status") == "completed"


def stream(base, token, seconds, cert, key, out):
    op = Operator(base, token)
    m = op.merchant("Scale-out stream")
    merchant = Merchant(base, m["api_key"])
    receiver = Receiver(cert, key)
    acked = {"orders": [], "moves": []}
    lock = threading.Lock()
    errors = {}
    stop = time.monotonic() + seconds

    def worker(w):
        i = 0
        while time.monotonic() < stop:
            i += 1
            name = f"SO-{w}-{i}"
            order_no, completed = fund(merchant, op, receiver.url, name)
            with lock:
                if order_no:
                    acked["orders"].append(order_no)
                if completed:
                    acked["moves"].append([order_no, "deposit.completed"])
                if not completed:
                    errors["deposit"] = errors.get("deposit", 0) + 1
            if i % 3 == 0:
                status, wd = merchant.post("/api/v1/merchant/orders/withdrawal", {
                    "merchant_order_no": "W" + name, "amount": 10, "currency_code": "THB",
                    "beneficiary_name": "Somchai Jaidee", "beneficiary_account": "0123456789",
                    "beneficiary_bank_code": "SCB", "callback_url": receiver.url})
                if status != 200:
                    with lock:
                        errors["withdrawal"] = errors.get("withdrawal", 0) + 1
                    continue
                with lock:
                    acked["orders"].append(wd["order_no"])
                status, _ = op("POST", f"/api/v1/operator/withdrawals/{wd['order_no']}/approve",
                               {"remarks": "scale-out"})
                with lock:
                    if status == 200:
                        acked["moves"].append([wd["order_no"], "withdrawal.approved"])
                    else:
                        errors["approve"] = errors.get("approve", 0) + 1

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Wait (bounded) for every acknowledged move's callback.
    expected = {tuple(m) for m in acked["moves"]}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        got = {k for k, _ in receiver.seen()}
        if expected <= got:
            break
        time.sleep(0.2)
    arrivals = [k for k, _ in receiver.seen()]
    json.dump({"acked": acked, "arrivals": arrivals, "errors": errors}, open(out, "w"))
    print(f"stream: {len(acked['orders'])} orders and {len(acked['moves'])} moves acknowledged "
          f"in {seconds} s ({len(acked['moves']) / seconds:.0f} moves/s), {len(arrivals)} callbacks "
          f"received; not acknowledged (an instance was killed): {errors or 'none'}")


def check(base, token, stream_file, released):
    op = Operator(base, token)
    data = json.load(open(stream_file))
    acked, arrivals = data["acked"], [tuple(a) for a in data["arrivals"]]
    failures = []
    missing = []
    for order_no in acked["orders"]:
        kind = "withdrawals" if order_no.startswith("W") else "deposits"
        status, _ = op("GET", f"/api/v1/operator/{kind}/{order_no}")
        if status != 200:
            missing.append(order_no)
    if missing:
        failures.append(f"{len(missing)} acknowledged orders do not exist: {missing[:5]}")
    got = set(arrivals)
    uncalled = [m for m in acked["moves"] if tuple(m) not in got]
    if uncalled:
        failures.append(f"{len(uncalled)} acknowledged moves were never called back: {uncalled[:5]}")
    counts = {}
    for a in arrivals:
        counts[a] = counts.get(a, 0) + 1
    twice = sum(n - 1 for n in counts.values() if n > 1)
    if twice > released:
        failures.append(f"{twice} callbacks arrived twice, more than the {released} claims the "
                        "killed instance gave back: two instances sent one attempt")
    status, ledger = op("GET", "/api/v1/operator/ledger/check")
    if status != 200 or not ledger.get("ok"):
        failures.append(f"the ledger check is not clean: {status} {ledger}")
    print(f"check: {len(acked['orders'])} acknowledged orders exist, {len(acked['moves'])} "
          f"acknowledged moves called back, {twice} delivered twice (killed mid-attempt and "
          f"given back: {released}), ledger: {ledger.get('entries_checked')} entries, "
          f"{'no difference' if ledger.get('ok') else 'DIFFERENCES'}")
    if failures:
        sys.exit("scale-out check failed:\n  " + "\n  ".join(failures))


def limit(base, token):
    op = Operator(base, token)
    m = op.merchant("Scale-out limit")
    status, body = op("PUT", f"/api/v1/operator/merchants/{m['merchant_id']}/rate-limit",
                      {"requests_per_minute": 1, "burst": 3})
    assert status == 200, (status, body)
    merchant = Merchant(base, m["api_key"])
    answers = [merchant.get("/api/v1/merchant/balance")[0] for _ in range(6)]
    ok, refused = answers.count(200), answers.count(429)
    print(f"limit: 1 a minute, burst 3, 6 requests spread over the instances: {ok} admitted, "
          f"{refused} refused with 429")
    if ok != 3 or refused != 3:
        sys.exit(f"the rate limit did not hold across instances: {answers}")


def call_from(source, method, url, headers):
    """A request from the local address `source` (another loopback
    address than the balancer's own, which the instances trust)."""
    import http.client
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10,
                                      source_address=(source, 0))
    try:
        conn.request(method, parts.path + ("?" + parts.query if parts.query else ""), headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()


def allowlist(base, token):
    op = Operator(base, token)
    m = op.merchant("Scale-out allowlist")
    status, keys = op("GET", f"/api/v1/operator/merchants/{m['merchant_id']}/api-keys")
    assert status == 200, (status, keys)
    key_id = keys["items"][0]["key_id"]
    status, body = op("PUT", f"/api/v1/operator/merchants/{m['merchant_id']}/api-keys/{key_id}/restrictions",
                      {"allowed_addresses": ["127.0.0.2"], "scope": "full"})
    assert status == 200 and body["allowed_addresses"] == ["127.0.0.2/32"], (status, body)
    merchant = Merchant(base, m["api_key"])
    balance = lambda source, forged=None: call_from(
        source, "GET", base + "/api/v1/merchant/balance",
        {**merchant.headers(merchant.key), **({"x-forwarded-for": forged} if forged else {})})
    # Every instance has it within the credential cache's second: asked
    # until one refuses, for at most three seconds, then all must.
    deadline = time.time() + 3
    while balance("127.0.0.3")[0] != 403 and time.time() < deadline:
        time.sleep(0.1)
    answers = [balance("127.0.0.3") for _ in range(6)]
    forged = [balance("127.0.0.3", "127.0.0.2") for _ in range(6)]
    allowed = [balance("127.0.0.2")[0] for _ in range(6)]
    refused = [s for s, b in answers + forged
               if s == 403 and b.get("error_code") == "MERCHANT_DISABLED"
               and "127.0.0.3" in b.get("message", "")]
    print(f"allowlist: a key accepted from 127.0.0.2 only, through HAProxy: from 127.0.0.2 "
          f"{allowed.count(200)} of 6 answered 200; from 127.0.0.3 {len(refused)} of 12 answered "
          f"403 MERCHANT_DISABLED naming 127.0.0.3 (6 of them sending X-Forwarded-For: 127.0.0.2)")
    if allowed.count(200) != 6 or len(refused) != 12:
        sys.exit(f"the allowlist did not hold through the balancer: allowed {allowed}, "
                 f"refused {answers}, forged {forged}")


def routing(base, token, instances):
    op = Operator(base, token)
    admins = []
    for name in ("router", "checker"):
        status, made = op("POST", "/api/v1/operator/operators", {
            "name": f"scale-out {name}", "role": "admin",
            "email": f"{name}-{uuid.uuid4().hex}@example.test"})
        assert status == 200, (status, made)
        status, issued = op("POST", f"/api/v1/operator/operators/{made['operator_id']}/tokens",
                            {"label": "scale-out"})
        assert status == 200, (status, issued)
        admins.append(issued["token"])
    merchant = op.merchant("scale-out routing")["merchant_id"]
    limit = f"{uuid.uuid4().int % 900000 + 100000}"
    status, filed = call("POST", base + "/api/v1/operator/routing-changes", {
        "currency_code": "BDT", "direction": "deposit", "merchant_id": merchant,
        "candidates": [{"channel_code": "SIMULATOR", "weight": 100, "daily_limit": limit}]},
        {"authorization": f"Bearer {admins[0]}"})
    assert status == 200, (status, filed)
    status, approved = call(
        "POST", base + f"/api/v1/operator/routing-changes/{filed['change_request_id']}/approve",
        {"remarks": "scale-out"}, {"authorization": f"Bearer {admins[1]}"})
    approved_at = time.monotonic()
    assert status == 200 and approved["status"] == "approved", (status, approved)
    expected = f"{limit}.0000"

    def in_force(instance):
        status, overview = call("GET", instance + "/api/v1/operator/routing", None,
                                {"authorization": f"Bearer {token}"})
        if status != 200:
            return False
        return any(t.get("merchant_id") == merchant and t["currency_code"] == "BDT"
                   and t["direction"] == "deposit"
                   and t["candidates"][0].get("daily_limit") == expected
                   for t in overview["tables"])

    took = {}
    pending = list(instances)
    while pending and time.monotonic() - approved_at < 5:
        for instance in list(pending):
            if in_force(instance):
                took[instance] = time.monotonic() - approved_at
                pending.remove(instance)
        time.sleep(0.02)
    print("routing: the approved table in force, seconds after the approval answered: " +
          ", ".join(f"{i} {took[i]:.3f}" for i in instances if i in took))
    if pending or max(took.values()) > 1.0:
        sys.exit(f"routing: not in force on every instance within a second: {took}, missing {pending}")
    status, trail = op("GET", f"/api/v1/operator/audit-trail?target_id=BDT/deposit/{merchant}")
    assert status == 200, (status, trail)
    actions = sorted(row["action"] for row in trail["items"])
    print(f"routing: the audit trail of BDT/deposit/{merchant}: {actions}")
    if actions != ["file_change_request", "set_routing"]:
        sys.exit(f"routing: the audit trail is not the filing and the change: {trail}")


def latency(base, token, count, cert, key, rate=100):
    """`count` deposits completed by bank transfers at `rate` a second
    (a steady arrival rate, not a flood that saturates the two cores),
    each with a callback to an https receiver."""
    op = Operator(base, token)
    m = op.merchant("Scale-out latency")
    merchant = Merchant(base, m["api_key"])
    receiver = Receiver(cert, key)
    orders = []
    for i in range(count):
        status, order = merchant.post("/api/v1/merchant/orders/deposit", {
            "merchant_order_no": f"LAT-{i}", "amount": 100, "currency_code": "THB",
            "callback_url": receiver.url})
        assert status == 200, (status, order)
        orders.append(order)
    committed = {}
    lock = threading.Lock()
    start = time.monotonic() + 0.1

    def worker(w):
        for i in range(w, count, THREADS):
            order = orders[i]
            wait = start + i / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            # Taken before the request that commits: the delay measured
            # is at least commit -> arrival (it includes the request's
            # own time), never less.
            at = time.monotonic()
            status, tx = op.record_transfer({
                "account_id": "acct-thb-1", "bank_reference": f"REF-LAT-{i}", "amount": 100,
                "currency_code": "THB", "remark": order["remark"]})
            assert status == 200 and tx["deposit_status"] == "completed", (status, tx)
            with lock:
                committed[order["order_no"]] = at

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(receiver.seen()) < len(committed):
        time.sleep(0.1)
    first = {}
    for (order_no, _), at in receiver.seen():
        first.setdefault(order_no, at)
    delays = sorted((first[o] - c) * 1000 for o, c in committed.items() if o in first)
    if len(delays) < len(committed):
        sys.exit(f"latency: {len(committed) - len(delays)} callbacks never arrived")
    pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
    print(f"latency: {len(delays)} callbacks at {rate}/s, from sending the request that commits "
          f"on the API-only instance to arrival from the workers-only instance: "
          f"median {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {delays[-1]:.1f} ms")
    # A benchmark figure, not a gate: on a shared two-core machine the
    # same build measured 31 ms one run and 227 ms another (the host's
    # speed halved, creates/s with it), so a bound here fails on the host,
    # not the service. The bound is issue 19's, for the bench.
    if pick(0.99) > 100:
        print("latency: p99 above the 100 ms target on this run (a figure, not a gate)")


def cpu_ticks():
    """Clock ticks of CPU (user + system) used so far, by program name."""
    ticks = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        ticks[pid] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def busy(command):
    before = cpu_ticks()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds = time.monotonic() - started
    after = cpu_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    # The command itself has exited: its time is its parent's to read.
    ran = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = {os.path.basename(command[0]): ran.ru_utime + ran.ru_stime
            - children.ru_utime - children.ru_stime}
    for pid, (name, t) in after.items():
        spent = t - before.get(pid, (name, 0))[1]
        if spent > 0:
            used[name] = used.get(name, 0) + spent / hz
    cores = os.cpu_count()
    share = ", ".join(f"{name} {100 * t / (seconds * cores):.0f}%"
                      for name, t in sorted(used.items(), key=lambda kv: -kv[1])[:6])
    print(result.stdout.strip())
    print(f"  cpu of {cores} cores over {seconds:.1f} s: {share}; "
          f"idle {max(0.0, 100 - 100 * sum(used.values()) / (seconds * cores)):.0f}%")


def first_attempts(metrics):
    buckets = dict(re.findall(
        r'^payments_callback_first_attempt_delay_seconds_bucket\{le="([^"]+)"\} (\d+)$',
        metrics, re.M))
    n = int(buckets["+Inf"])
    print(f"server side (payments_callback_first_attempt_delay_seconds, the workers-only "
          f"instance: commit on the API-only one -> its first attempt): {n} first attempts, "
          f"{buckets['0.05']} within 50 ms, {buckets['0.1']} within 100 ms")
    if int(buckets["0.1"]) < 0.99 * n:
        print("server side: p99 above the 100 ms target on this run (a figure, not a gate)")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "stream":
        stream(args[0], args[1], int(args[2]), args[3], args[4], args[5])
    elif command == "check":
        check(args[0], args[1], args[2], int(args[3]))
    elif command == "limit":
        limit(args[0], args[1])
    elif command == "allowlist":
        allowlist(args[0], args[1])
    elif command == "routing":
        routing(args[0], args[1], args[2:])
    elif command == "latency":
        latency(args[0], args[1], int(args[2]), args[3], args[4])
    elif command == "busy":
        busy(args)
    elif command == "first-attempts":
        first_attempts(sys.stdin.read())
    else:
        sys.exit(__doc__)
