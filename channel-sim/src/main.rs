//! `payments-channel-sim`: runs the simulated channel until interrupted,
//! restarting from its journal when `POST /control/restart` asks.

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PAYMENTS_CHANNEL_SIM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = payments_channel_sim::cli::run_from(std::env::args_os()).await {
        // Help and version are "errors" that print themselves and exit 0.
        if let Some(clap) = e.downcast_ref::<clap::Error>() {
            clap.exit();
        }
        eprintln!("payments-channel-sim: {e:#}");
        std::process::exit(1);
    }
}
