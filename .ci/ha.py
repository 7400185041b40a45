#!/usr/bin/env python3
"""The load side of .ci/ha: a stream through the service while the database
cluster under it loses its leader and later switches over, and the checks
afterwards, from outside. Standard library only; the merchant, operator and
receiver helpers are .ci/scale_out.py's.

  ha.py stream BASE OPERATOR_TOKEN SECONDS CERT KEY OUT.json
  ha.py check  BASE OPERATOR_TOKEN STREAM.json SIM_URL [--expect-loss]

`stream` runs SECONDS of creates, bank transfers and their completions (each
recorded by one operator and approved by another), and withdrawals approved
and dispatched to the channel simulator, with callbacks to an https
receiver. The chaos comes from the environment, run at its second:
HA_KILL_AT/HA_KILL (the leader's node killed), HA_RESTART_AT/HA_RESTART,
HA_SWITCHOVER_AT/HA_SWITCHOVER; each command's start is written to the
stream's file with every request's second and answer. `check` proves that
nothing acknowledged was lost or doubled and reports the outage's seconds;
with --expect-loss (a deliberate fault) it passes only if the check found
something lost, and names it.
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_out import Merchant, Operator, Receiver, call  # noqa: E402

THREADS = 6


def stream(base, token, seconds, cert, key, out):
    op = Operator(base, token)
    op.people()
    m = op.merchant("HA stream")
    merchant = Merchant(base, m["api_key"])
    receiver = Receiver(cert, key)
    acked = {"creates": [], "completions": [], "approvals": []}
    timeline, chaos, errors = [], {}, {}
    lock = threading.Lock()
    start = time.monotonic()
    stop = start + seconds

    def at():
        return round(time.monotonic() - start, 3)

    def note(what, status):
        with lock:
            timeline.append((at(), what, status))
            if status != 200:
                errors[f"{what} {status}"] = errors.get(f"{what} {status}", 0) + 1
        if status != 200:
            # A client waits a moment before it tries again (the service's
            # Retry-After is a second; a shorter wait measures the outage
            # more finely).
            time.sleep(0.2)

    def worker(w):
        i = 0
        while time.monotonic() < stop:
            i += 1
            name = f"HA-{w}-{i}"
            status, order = merchant.post("/api/v1/merchant/orders/deposit", {
                "merchant_order_no": name, "amount": 100, "currency_code": "THB",
                "callback_url": receiver.url})
            if status != 200:
                # Unknown or refused: the merchant's retry of the same
                # order gets the order made, or a clean create.
                status, order = merchant.post("/api/v1/merchant/orders/deposit", {
                    "merchant_order_no": name, "amount": 100, "currency_code": "THB",
                    "callback_url": receiver.url})
            note("create", status)
            if status != 200:
                continue
            with lock:
                acked["creates"].append(order["order_no"])
            status, tx = op.record_transfer({
                "account_id": "acct-thb-1", "bank_reference": "REF-" + name, "amount": 100,
                "currency_code": "THB", "remark": order["remark"]})
            completed = status == 200 and tx.get("deposit_status") == "completed"
            note("completion", status if completed or status != 200 else 599)
            if completed:
                with lock:
                    acked["completions"].append(order["order_no"])
            if i % 3 == 0 and completed:
                status, wd = merchant.post("/api/v1/merchant/orders/withdrawal", {
                    "merchant_order_no": "W" + name, "amount": 10, "currency_code": "THB",
                    "beneficiary_name": "Somchai Jaidee", "beneficiary_account": "0123456789",
                    "beneficiary_bank_code": "SCB", "callback_url": receiver.url})
                note("withdrawal", status)
                if status != 200:
                    continue
                with lock:
                    acked["creates"].append(wd["order_no"])
                status, _ = op("POST", f"/api/v1/operator/withdrawals/{wd['order_no']}/approve",
                               {"remarks": "ha"})
                note("approval", status)
                if status == 200:
                    with lock:
                        acked["approvals"].append(wd["order_no"])

    def chaos_at(name):
        when = os.environ.get(f"HA_{name}_AT")
        command = os.environ.get(f"HA_{name}")
        if not when or not command:
            return
        time.sleep(max(0.0, start + float(when) - time.monotonic()))
        chaos[name.lower()] = at()
        print(f"ha: {name.lower()} at {chaos[name.lower()]:.1f} s", flush=True)
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        chaos[name.lower() + "_done"] = at()
        if done.returncode != 0:
            print(f"ha: {name.lower()} failed: {done.stdout}{done.stderr}", flush=True)
            chaos[name.lower() + "_failed"] = done.returncode

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(THREADS)]
    threads += [threading.Thread(target=chaos_at, args=(n,)) for n in ("KILL", "RESTART", "SWITCHOVER")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    moves = {(o, "deposit.completed") for o in acked["completions"]}
    moves |= {(o, "withdrawal.approved") for o in acked["approvals"]}
    # A delivery claimed when the leader died, whose claim's answer was
    # lost with it, stays SENDING until the stuck sweep gives it back (5
    # minutes, swept every minute): so up to 7 minutes, though usually none.
    waited = time.monotonic()
    deadline = waited + 420
    told = False
    while time.monotonic() < deadline:
        left = moves - {k for k, _ in receiver.seen()}
        if not left:
            break
        if not told and time.monotonic() - waited > 30:
            print(f"stream: {len(left)} callbacks not yet arrived (a claim lost with the leader "
                  f"waits for the stuck sweep): {sorted(left)[:3]}", flush=True)
            told = True
        time.sleep(0.5)
    arrivals = [k for k, _ in receiver.seen()]
    json.dump({"merchant": m, "acked": acked, "timeline": timeline, "chaos": chaos,
               "arrivals": arrivals, "errors": errors, "seconds": seconds}, open(out, "w"))
    print(f"stream: {len(acked['creates'])} creates, {len(acked['completions'])} completions and "
          f"{len(acked['approvals'])} approvals acknowledged in {seconds} s; {len(arrivals)} callbacks "
          f"received; refused or unknown: {errors or 'none'}")


def outage(timeline, since, until=None):
    """(first non-200 after `since`, first 200 after that, seconds of
    non-200 answers), in seconds after `since`."""
    after = [(t, s) for t, _, s in sorted(timeline) if t >= since and (until is None or t < until)]
    first_bad = next((t for t, s in after if s != 200), None)
    if first_bad is None:
        return None, None, 0.0
    first_ok = next((t for t, s in after if t > first_bad and s == 200), None)
    bad = [t for t, s in after if s != 200]
    return (round(first_bad - since, 1), None if first_ok is None else round(first_ok - since, 1),
            round((bad[-1] - bad[0]) if bad else 0.0, 1))


def check(base, token, stream_file, sim_url, expect_loss):
    op = Operator(base, token)
    data = json.load(open(stream_file))
    acked, chaos = data["acked"], data["chaos"]
    lost, doubled, failures = [], [], []
    for order_no in acked["creates"]:
        kind = "withdrawals" if order_no.startswith("W") else "deposits"
        status, order = op("GET", f"/api/v1/operator/{kind}/{order_no}")
        if status != 200:
            lost.append(f"create {order_no}")
        elif order_no in acked["completions"] and order.get("status") != "completed":
            lost.append(f"completion {order_no} ({order.get('status')})")
        elif order_no in acked["approvals"] and order.get("status") == "pending":
            lost.append(f"approval {order_no} (pending)")
    # The feed, read from the start: every acknowledged move in it, each once.
    merchant = Merchant(base, data["merchant"]["api_key"])
    seen, after = [], None
    while True:
        params = {"limit": "200"}
        if after:
            params["after"] = after
        status, page = merchant.get("/api/v1/merchant/events", params)
        if status != 200:
            failures.append(f"the events feed answered {status}: {page}")
            break
        seen += [(e["order_no"], e["event"], e["event_id"]) for e in page["items"]]
        after = page["next_cursor"]
        if not page["has_more"]:
            break
    feed = {(o, e) for o, e, _ in seen}
    moves = [(o, "deposit.completed") for o in acked["completions"]]
    moves += [(o, "withdrawal.approved") for o in acked["approvals"]]
    gaps = [m for m in moves if m not in feed]
    ids = [i for _, _, i in seen]
    feed_twice = len(ids) - len(set(ids))
    uncalled = [m for m in moves if tuple(m) not in {tuple(a) for a in data["arrivals"]}]
    # The channel's own record, kept by order number: a payout is taken
    # once however often it is sent, so a resend under the same number after
    # an unknown outcome (the dispatcher's discipline: ask first, send again
    # only when the channel has no record) moves no money twice. Money moves
    # twice when the channel pays a payout the service gave back to the
    # merchant (rejected or failed while the channel holds it as paid or
    # under way): that is what is counted.
    _, stats = call("GET", f"{sim_url}/control/stats")
    _, payouts = call("GET", f"{sim_url}/control/payouts")
    held = [p for p in payouts["payouts"] if p["order_no"].startswith("W")]
    given_back = []
    for p in held:
        if p["status"] == "failed":
            continue
        status, order = op("GET", f"/api/v1/operator/withdrawals/{p['order_no']}")
        if status == 200 and order.get("status") in ("rejected", "failed"):
            given_back.append(f"{p['order_no']} ({p['status']} at the channel, {order['status']} here)")
    sent_twice = len(given_back)
    resent = max(0, stats["payout_dispatches"] - len(payouts["payouts"]))
    status, ledger = op("GET", "/api/v1/operator/ledger/check")
    ledger_ok = status == 200 and ledger.get("ok")
    kill = outage(data["timeline"], chaos["kill"], chaos.get("switchover")) if "kill" in chaos else (None, None, 0)
    switch = outage(data["timeline"], chaos["switchover"]) if "switchover" in chaos else (None, None, 0)
    print(f"acknowledged writes: {len(acked['creates'])} creates, {len(acked['completions'])} completions, "
          f"{len(acked['approvals'])} approvals; lost {len(lost)}")
    print(f"payouts paid and given back: {sent_twice} ({len(held)} payouts the channel holds, each once; "
          f"{stats['payout_dispatches']} dispatches, {resent} of them resends under the same number)")
    print(f"feed gaps: {len(gaps)} ({len(seen)} events read from the start, {feed_twice} twice)")
    print(f"acknowledged moves not called back: {len(uncalled)}")
    print(f"ledger: {'clean' if ledger_ok else 'DIFFERENCES'} ({ledger.get('entries_checked')} entries)")
    print(f"kill of the leader at {chaos.get('kill')} s: first refusal after {kill[0]} s, "
          f"first 200 again after {kill[1]} s (target 30 s)")
    print(f"switchover at {chaos.get('switchover')} s: first refusal after {switch[0]} s, "
          f"{switch[2]} s of refusals (target 5 s)")
    if lost:
        failures.append(f"{len(lost)} acknowledged writes lost: {lost[:8]}")
    if sent_twice:
        failures.append(f"{sent_twice} payouts paid by the channel and given back: {given_back[:5]}")
    if gaps or feed_twice:
        failures.append(f"the feed misses {len(gaps)} acknowledged moves ({gaps[:5]}) and repeats {feed_twice}")
    if uncalled and not expect_loss:
        failures.append(f"{len(uncalled)} acknowledged moves never called back: {uncalled[:5]}")
    if not ledger_ok:
        failures.append(f"the ledger check found differences: {ledger}")
    for name in ("kill", "restart", "switchover"):
        if chaos.get(f"{name}_failed"):
            failures.append(f"the {name} command failed")
    if not expect_loss:
        if kill[1] is None or kill[1] > 30:
            failures.append(f"after the kill the service answered 200 again only after {kill[1]} s")
        if switch[2] > 5:
            failures.append(f"the switchover refused requests for {switch[2]} s")
    if expect_loss:
        if lost:
            print(f"ha: the deliberate fault was caught: {len(lost)} acknowledged writes lost, "
                  f"for example {lost[:3]}")
            return
        sys.exit("ha: the deliberate fault lost nothing the check could find: the check proved nothing")
    if failures:
        sys.exit("ha check failed:\n  " + "\n  ".join(failures))
    print("ha: nothing acknowledged was lost or doubled")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "stream":
        stream(args[0], args[1], int(args[2]), args[3], args[4], args[5])
    elif command == "check":
        check(args[0], args[1], args[2], args[3], "--expect-loss" in args[4:])
    else:
        sys.exit(__doc__)
