//! `payments-channel-sim`: runs the simulated channel until interrupted,
//! restarting from its journal when `POST /control/restart` asks.

#[tokio::main]
async fn main() {
    payments_channel_sim::cli::main(std::env::args_os()).await
}
