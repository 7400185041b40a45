# Sourced by the scripts that start the production profile, which refuses
# the in-process simulator: `payments-channel-sim` as a separate process and
# the [[channels]] entry that points the service at it (the sandbox's
# channel, same id, code, currencies and costs, as kind `http`).
#
#   start_channel_sim BIN DIR   starts it on a free port, journal in DIR;
#                               sets sim_url and sim_secret, adds its pid to pids
#   channel_sim_toml            prints the [[channels]] entry
start_channel_sim() {
  local bin=$1 dir=$2 port
  mkdir -p "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  sim_secret="sim_$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
  sim_url="http://127.0.0.1:$port"
  # Payouts wait for /control (as the in-process simulator's waited for the
  # sandbox API): the suite reads them `processing`, as it always has.
  PAYMENTS_CHANNEL_SIM_SECRET="$sim_secret" "$bin" --bind "127.0.0.1:$port" \
    --data-dir "$dir/journal" --settle-by-control > "$dir/stdout.log" 2> "$dir/sim.log" &
  pids+=($!)
  for _ in $(seq 1 100); do
    curl -sf "$sim_url/control/stats" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$dir/sim.log"; echo "payments-channel-sim did not start"; exit 1
}

channel_sim_toml() {
  cat <<TOML

[[channels]]
id = "chan-sim-1"
code = "SIMULATOR"
name = "Sandbox simulator"
kind = "http"
currencies = ["THB", "BDT"]
base_url = "$sim_url"
secret = "$sim_secret"
request_timeout_ms = 5000
# On the loopback address, beside the service: production allows http there.
private_network = true

[channels.costs.deposit]
percent = "0.5"

[channels.costs.withdrawal]
fixed = "2"
TOML
}
