//! Where log lines go and how they look: one JSON object per line (the
//! production default, for a log pipeline) or text for a person at a
//! terminal, on stderr, filtered by `PAYMENTS_LOG_LEVEL` (a level, or a
//! `RUST_LOG`-style filter such as `info,payments=debug`, which a target prefix matches for every crate of the service).

use std::io::IsTerminal;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Json,
    Text,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(LogFormat::Json),
            "text" => Ok(LogFormat::Text),
            other => Err(format!("log format `{other}`: expected json or text")),
        }
    }
}

/// Installs the process's subscriber (the first call wins; tests that
/// start several services in one process keep the first).
pub fn init(format: LogFormat, filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        // The current span's fields (request id, operation, merchant) ride
        // on every line, so one line says which request it belongs to.
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
    };
}
