//! Where the machine's CPU went over a measured window: the machine's busy
//! time from `/proc/stat`, each named process's from `/proc/PID/stat`
//! (every thread), PostgreSQL's as the sum over its processes, and this
//! load generator's own. On a machine whose cores the service, the
//! channel, the database and the load all share, the CPU each unit of work
//! takes, all told, bounds the rate however the service is built; the
//! bench reports it beside each rate so that a target past that bound
//! reads as the machine's, not the code's.
//!
//! The processes to name come from `BENCH_CPU_PIDS` (`name=pid,...`),
//! which `cargo xtask bench` sets. A PostgreSQL backend that ends within
//! the window takes its time with it; the service's pool keeps its
//! connections, so little is lost that way.

use std::collections::HashMap;

/// Clock ticks, as `/proc` counts them, at one instant.
pub struct Sample {
    /// The machine's non-idle ticks, summed over its cores.
    busy: u64,
    /// Every tick, idle or not, summed over its cores.
    total: u64,
    /// Named processes' ticks, by name.
    named: Vec<(String, u64)>,
    /// Each PostgreSQL process's ticks, by pid.
    postgres: HashMap<u32, u64>,
    own: u64,
}

/// Ticks a process has run, user and system, over all its threads.
fn ticks_of(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may hold spaces; the fields after
    // it are fixed: utime and stime are the 12th and 13th after it.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn postgres_ticks() -> HashMap<u32, u64> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (comm.trim() == "postgres").then_some(())?;
            Some((pid, ticks_of(&pid.to_string())?))
        })
        .collect()
}

fn named_pids() -> Vec<(String, String)> {
    std::env::var("BENCH_CPU_PIDS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, pid)| (name.trim().to_string(), pid.trim().to_string()))
        .collect()
}

/// The machine's busy and total ticks so far, summed over its cores.
pub fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let counts: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is
    // already counted in user).
    let at = |i: usize| counts.get(i).copied().unwrap_or(0);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    (busy, busy + at(3) + at(4))
}

impl Sample {
    pub fn now() -> Sample {
        let (busy, total) = machine_ticks();
        Sample {
            busy,
            total,
            named: named_pids()
                .into_iter()
                .map(|(name, pid)| {
                    let ticks = ticks_of(&pid).unwrap_or(0);
                    (name, ticks)
                })
                .collect(),
            postgres: postgres_ticks(),
            own: ticks_of("self").unwrap_or(0),
        }
    }

    /// What ran between `self` and `later`, per unit of work (`units` of
    /// them done in the window), as JSON: the machine's cores, how busy
    /// they were, and the CPU microseconds each process took per unit,
    /// with what no named process took as `rest`.
    pub fn per_unit(&self, later: &Sample, units: usize) -> serde_json::Value {
        let tick_us = 1_000_000.0 / ticks_per_second();
        let units = units.max(1) as f64;
        let us = |ticks: u64| ticks as f64 * tick_us / units;
        let mut by = serde_json::Map::new();
        let mut counted = 0;
        for ((name, before), (_, after)) in self.named.iter().zip(&later.named) {
            let ticks = after.saturating_sub(*before);
            counted += ticks;
            by.insert(name.clone(), us(ticks).into());
        }
        let postgres: u64 = later
            .postgres
            .iter()
            .map(|(pid, after)| after.saturating_sub(self.postgres.get(pid).copied().unwrap_or(0)))
            .sum();
        let own = later.own.saturating_sub(self.own);
        let busy = later.busy.saturating_sub(self.busy);
        by.insert("postgres".into(), us(postgres).into());
        by.insert("load".into(), us(own).into());
        by.insert(
            "rest".into(),
            us(busy.saturating_sub(counted + postgres + own)).into(),
        );
        let total = later.total.saturating_sub(self.total).max(1);
        serde_json::json!({
            "cores": std::thread::available_parallelism().map_or(1, usize::from),
            "busy_share": busy as f64 / total as f64,
            "us_per_unit": by,
            "busy_us_per_unit": us(busy),
        })
    }
}

/// `getconf CLK_TCK`: the kernel's unit for `/proc`'s times (100 on
/// Linux's usual builds).
fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}
