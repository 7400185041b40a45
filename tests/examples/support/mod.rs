// Each tool includes this module and uses its own part of it.
#![allow(dead_code)]

//! What the benchmark tools share: a callback receiver that keeps
//! connections open, as a merchant's server does, and latency percentiles.

pub mod cpu;
pub mod receiver;
pub mod two_people;

/// The `q` quantile of sorted microseconds, in milliseconds.
pub fn quantile_ms(sorted_micros: &[u32], q: f64) -> f64 {
    if sorted_micros.is_empty() {
        return 0.0;
    }
    let i = ((sorted_micros.len() as f64 * q).ceil() as usize).clamp(1, sorted_micros.len()) - 1;
    f64::from(sorted_micros[i]) / 1000.0
}

pub fn unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}
