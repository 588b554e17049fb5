//! `hostile`: generate the hostile corpus, run roadscan on it, fuzz the readers.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(name = "hostile", about = "Hostile inputs for roadscan: corpus, runner, fuzzer.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write the corpus (cases, partners, manifest.tsv) into DIR: same seed, same bytes.
    Gen {
        dir: PathBuf,
        /// Seed of the random mutations.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The repository (for data/opendrive/demo.xodr) [default: the one hostile was built in].
        #[arg(long)]
        repo: Option<PathBuf>,
        /// The shared reference data [default: $ROADSCAN_SHARED_DATA, else REPO/../shared/data].
        #[arg(long)]
        shared: Option<PathBuf>,
    },
    /// Run every relevant roadscan verb on every case; print the table and the failing runs;
    /// exit 1 if any run fails.
    Run {
        #[arg(long)]
        roadscan: PathBuf,
        #[arg(long)]
        cases: PathBuf,
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Seconds a run may take.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Peak resident memory a run may reach, MiB.
        #[arg(long, default_value_t = 1024)]
        rss_mib: u64,
        /// Only cases whose name (or "NAME VERB") contains this, or one of its comma-separated
        /// parts (e.g. beams/,camera/,sensorpath/,world/ for the sensors' inputs).
        #[arg(long)]
        only: Option<String>,
        /// Also write the table and failing runs to this file.
        #[arg(long)]
        report: Option<PathBuf>,
    },
    /// Fuzz one reader in-process for some seconds; crashes go to --findings; exit 1 if any.
    Fuzz {
        #[arg(long)]
        target: hostile::fuzz::Target,
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "hostile-findings")]
        findings: PathBuf,
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        shared: Option<PathBuf>,
        /// Seconds one input may take.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Resident memory the process may reach, MiB.
        #[arg(long, default_value_t = 2048)]
        rss_mib: u64,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Gen { dir, seed, repo, shared } => {
            let repo = repo.unwrap_or_else(hostile::gen::default_repo);
            let shared = shared.unwrap_or_else(|| hostile::gen::default_shared(&repo));
            if !shared.is_dir() {
                eprintln!("hostile: warning: no shared data at {}: hand-built seeds only", shared.display());
            }
            match hostile::gen::generate(&hostile::gen::Options { dir: dir.clone(), repo, shared, seed }) {
                Ok(cases) => {
                    println!("hostile: {} cases in {}", cases.len(), dir.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("hostile: gen: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Run { roadscan, cases, jobs, timeout, rss_mib, only, report } => {
            let o = hostile::run::Options {
                roadscan,
                cases,
                jobs,
                timeout: Duration::from_secs_f64(timeout),
                rss_limit: rss_mib << 20,
                only,
                work: None,
            };
            match hostile::run::run(&o) {
                Ok((outcomes, inputs)) => {
                    let mut text = Vec::new();
                    let failing = hostile::run::report(&outcomes, inputs, &mut text).unwrap_or(1);
                    print!("{}", String::from_utf8_lossy(&text));
                    if let Some(p) = report {
                        if let Err(e) = std::fs::write(&p, &text) {
                            eprintln!("hostile: {}: {e}", p.display());
                        }
                    }
                    if failing == 0 {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    eprintln!("hostile: run: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Fuzz { target, seconds, seed, findings, repo, shared, timeout, rss_mib } => {
            let repo = repo.unwrap_or_else(hostile::gen::default_repo);
            let shared = shared.unwrap_or_else(|| hostile::gen::default_shared(&repo));
            let o = hostile::fuzz::Options {
                target,
                seconds,
                seed,
                findings,
                repo,
                shared,
                timeout: Duration::from_secs_f64(timeout),
                rss_limit: rss_mib << 20,
            };
            match hostile::fuzz::fuzz(&o) {
                Ok(s) => {
                    println!(
                        "hostile fuzz {}: {} inputs, {} accepted, {} crashes",
                        target.name(),
                        s.execs,
                        s.accepted,
                        s.crashes.len()
                    );
                    if s.crashes.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    eprintln!("hostile: fuzz: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
