//! Project automation, run as `cargo xtask <command>`.

mod bench;
mod clients;
mod codegen;
mod conformance;
mod openapi;

use anyhow::{bail, Result};
use std::path::PathBuf;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  clients [KIT...]    regenerate the language kits in clients/ (python,
                      typescript, go, java) from openapi/merchant.json with their
                      pinned generators, installing each toolchain on first
                      use; .ci/clients runs their smoke suites
  codegen [--check]   regenerate generated/ from openapi/; with --check, change
                      nothing and fail if generated/ or the dropshot round trip
                      differs from the spec
  bench [--seconds N] [--drain N] [--steady-rate N] [--sizes 10000,...]
        [--only requests,delivery,sizes,channels,feed,abuse,routing,peer]
        [--peer svix]
                      release build on the local PostgreSQL, load from
                      separate processes: create, query, balance at 1/16/64
                      clients against pgbench's insert; a drained callback
                      backlog and a steady rate against wrk's and pgbench's
                      ceilings; everything again on tables seeded to each
                      size (default 10⁴, 10⁵, 10⁶ orders); payouts and the
                      channel money path through payments-channel-sim in its
                      own process (--steady-rate is its offered rate too);
                      the events feed followed while 16 clients complete
                      deposits (events/s, commit → feed lag).
                      With --peer svix (SVIX_BIN: a svix-server built as
                      ../shared/peers/svix/README.md says), also the drain
                      (3 each, in turn) and steady 500/s side by side with it.
                      Writes bench/results/ (with --only: target/bench-partial/;
                      channels, feed, abuse, routing and peer .md always to
                      bench/results/)
  conformance [--profile sandbox|production] [--base-url URL]
              [--features a,b] [--tags EXPR] [--realtime]
                      run the cucumber suite (features/) against the profile,
                      in-process or against a deployed service at URL; writes
                      JUnit and JSON reports to target/conformance/<profile>/.
                      With --base-url: CONFORMANCE_OPERATOR_TOKEN (or
                      CONFORMANCE_API_KEYS) of that deployment, and
                      CONFORMANCE_RECEIVER_HOST if it must reach the suite's
                      callback receivers at another address than 127.0.0.1
";

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("codegen") => {
            let check = match &args[1..] {
                [] => false,
                [flag] if flag == "--check" => true,
                other => bail!("codegen: unexpected arguments {other:?}\n\n{USAGE}"),
            };
            codegen::run(&root, check)
        }
        Some("bench") => {
            let options = bench::Options::parse(&args[1..])?;
            bench::run(&root, &options)
        }
        Some("clients") => clients::run(&root, &args[1..]),
        Some("openapi") => openapi::run(&root, &args[1..]),
        Some("conformance") => {
            let options = conformance::Options::parse(&args[1..])?;
            conformance::run(&root, &options)
        }
        Some("-h") | Some("--help") | Some("help") | None => {
            print!("{USAGE}{}", openapi::USAGE);
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

fn workspace_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}
