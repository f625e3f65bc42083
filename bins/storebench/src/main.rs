//! storebench: the benchmark suite of issue 8, run by `just bench`.
//!
//! It starts the release storesrv and nginx on the same bytes, pinned to
//! one core, drives them from the other core with wrk and oha in A/B/A/B
//! rounds, and reports the median ratio; it samples VmRSS and VmHWM once a
//! second; and it times the media pipeline against libvips and the expiry
//! machinery over a million records in process. bench/README.md explains
//! how to read the output.

mod attack;
mod cluster;
mod inproc;
mod mcp;
mod moderation;
mod passwords;
mod postgres;
mod ranges;
mod resumable;
mod scenarios;
mod tools;

use std::path::PathBuf;

/// Whether a figure met its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// A figure with no target (a reference or a breakdown).
    Info,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: &'static str,
    pub measure: String,
    pub figure: String,
    pub target: String,
    pub verdict: Verdict,
}

impl Row {
    pub fn new(
        scenario: &'static str,
        measure: impl Into<String>,
        figure: impl Into<String>,
        target: impl Into<String>,
        met: Option<bool>,
    ) -> Self {
        Self {
            scenario,
            measure: measure.into(),
            figure: figure.into(),
            target: target.into(),
            verdict: match met {
                Some(true) => Verdict::Met,
                Some(false) => Verdict::Missed,
                None => Verdict::Info,
            },
        }
    }
}

/// What every scenario needs.
#[derive(Debug)]
pub struct Bench {
    pub storesrv: PathBuf,
    pub work: PathBuf,
    pub rounds: usize,
    pub secs: u32,
    pub objects: usize,
}

fn usage() -> ! {
    eprintln!(
        "usage: storebench [--rounds N] [--secs S] [--objects N] [--only 1,2,...] [--out FILE]\n\
         \x20                 [--database-url postgres://...] [--cluster-url http://...]\n\
         \x20                 [--cluster-pids PID,PID]\n\
         Runs the scenarios of docs/PERFORMANCE.md against target/release/storesrv; with a\n\
         database URL (an account that may create databases), scenarios 1, 3 and 5 run\n\
         with the records in PostgreSQL too; with a cluster URL (scripts/cluster), scenario\n\
         14 measures that set-up beside sled, and scenario 16 its resumable uploads (the\n\
         memory of its storesrv processes, whose pids --cluster-pids names)."
    );
    std::process::exit(2)
}

fn main() {
    let mut rounds = 3;
    let mut secs = 10;
    let mut objects = 1_000_000;
    let mut only: Option<Vec<u32>> = None;
    let mut out: Option<PathBuf> = None;
    let mut database_url: Option<String> = None;
    let mut cluster_url: Option<String> = None;
    let mut cluster_pids: Vec<u32> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--rounds" => rounds = value().parse().unwrap_or_else(|_| usage()),
            "--secs" => secs = value().parse().unwrap_or_else(|_| usage()),
            "--objects" => objects = value().parse().unwrap_or_else(|_| usage()),
            "--only" => {
                only = Some(
                    value()
                        .split(',')
                        .map(|n| n.trim().parse().unwrap_or_else(|_| usage()))
                        .collect(),
                )
            }
            "--out" => out = Some(PathBuf::from(value())),
            "--database-url" => database_url = Some(value()),
            "--cluster-url" => cluster_url = Some(value()),
            "--cluster-pids" => {
                cluster_pids = value()
                    .split(',')
                    .map(|n| n.trim().parse().unwrap_or_else(|_| usage()))
                    .collect()
            }
            _ => usage(),
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let storesrv = root.join("target/release/storesrv");
    assert!(
        storesrv.exists(),
        "build the server first: cargo build --release -p storesrv"
    );
    // STOREBENCH_WORK names another place for the servers' data: a
    // file system of its own (bench/run.sh mounts one when it can), so
    // that what this machine's own disk went through before the run does
    // not weigh on it.
    let work = std::env::var_os("STOREBENCH_WORK")
        .map_or_else(|| root.join("target/bench-work"), PathBuf::from);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let bench = Bench {
        storesrv,
        work,
        rounds,
        secs,
        objects,
    };
    let wanted = |n: u32| only.as_ref().is_none_or(|o| o.contains(&n));

    println!(
        "storebench: {} rounds of {} s each, A/B against nginx; servers on core {}, load on core {}",
        bench.rounds,
        bench.secs,
        tools::SERVER_CORE,
        tools::LOAD_CORE
    );
    let fixtures = inproc::Fixtures::make(&bench.work);
    let mut rows = Vec::new();
    let mut peaks: Vec<(&'static str, u64)> = Vec::new();
    let mut gets = None;
    let mut uploads = None;
    if wanted(1) || wanted(2) || wanted(5) || wanted(6) {
        let (r, g, peak) = scenarios::downloads(&bench, &fixtures);
        rows.extend(r);
        gets = Some(g);
        peaks.push(("1-2 downloads", peak));
    }
    if wanted(3) || wanted(5) || wanted(11) {
        let (r, u, peak) = scenarios::small_uploads(&bench);
        rows.extend(r);
        uploads = Some(u);
        peaks.push(("3 small uploads", peak));
    }
    if wanted(4) {
        let (r, peak) = scenarios::large_uploads(&bench);
        rows.extend(r);
        peaks.push(("4 large uploads", peak));
    }
    if wanted(5) {
        if let (Some(g), Some(u)) = (gets, uploads) {
            // Scenario 4 leaves gigabytes of writeback behind: the mix's
            // fsyncs must not queue behind it.
            settle_disk();
            let (r, peak) = scenarios::mix(&bench, &fixtures, g, u);
            rows.extend(r);
            peaks.push(("5 mix", peak));
        }
    }
    if wanted(1) || wanted(3) || wanted(5) {
        match &database_url {
            Some(url) => {
                settle_disk();
                rows.extend(postgres::scenarios(&bench, &fixtures, url));
            }
            None => println!("  (no --database-url: scenarios 1, 3 and 5 run on sled only)"),
        }
    }
    if wanted(14) {
        match &cluster_url {
            Some(url) => {
                settle_disk();
                rows.extend(cluster::scenarios(&bench, &fixtures, url));
            }
            None => println!("  (no --cluster-url: scenario 14 does not run)"),
        }
    }
    if wanted(15) {
        settle_disk();
        rows.extend(ranges::ranges_and_metrics(&bench, &fixtures));
    }
    if wanted(16) {
        settle_disk();
        let cluster = cluster_url.as_deref().map(|u| (u, cluster_pids.as_slice()));
        rows.extend(resumable::scenarios(&bench, cluster));
    }
    if wanted(17) {
        settle_disk();
        rows.extend(mcp::scenarios(&bench));
    }
    if wanted(18) {
        settle_disk();
        rows.extend(passwords::flood_of_wrong_passwords(&bench, &fixtures));
    }
    if wanted(19) {
        settle_disk();
        rows.extend(moderation::scenarios(&bench));
    }
    if wanted(6) {
        let (r, peak) = scenarios::memory(&bench, &fixtures);
        rows.extend(r);
        peaks.push(("6 two 24 MP image jobs", peak));
    }
    if wanted(7) || wanted(8) {
        settle_disk();
        rows.extend(inproc::media(&fixtures));
    }
    if wanted(9) {
        settle_disk();
        rows.extend(inproc::expiry(&bench));
    }
    if wanted(10) {
        let (r, peak) = scenarios::zip(&bench, &fixtures);
        rows.extend(r);
        peaks.push(("10 zip", peak));
    }
    if wanted(12) {
        settle_disk();
        // Its peak is reported in its own row: 500 slow readers and an
        // image flood are an attack, not a workload the memory target of
        // issue 8 speaks of.
        rows.extend(attack::attack(&bench, &fixtures));
    }
    if wanted(13) {
        settle_disk();
        let (r, peak) = attack::image_flood_memory(&bench, &fixtures);
        rows.extend(r);
        peaks.push(("13 image flood", peak));
    }
    if !peaks.is_empty() {
        let (name, worst) = peaks
            .iter()
            .max_by_key(|(_, p)| *p)
            .copied()
            .expect("peaks");
        rows.push(Row::new(
            "6",
            format!("peak memory over every scenario (worst: {name})"),
            format!("{:.1} MiB", worst as f64 / 1048576.0),
            "< 300 MB",
            Some(worst < 300 * 1_000_000),
        ));
    }

    let report = render(&rows);
    println!("\n{report}");
    if let Some(out) = out {
        std::fs::write(&out, &report).expect("report written");
        println!("written to {}", out.display());
    }
    let _ = std::fs::remove_dir_all(&bench.work);
}

fn render(rows: &[Row]) -> String {
    let mut s = String::from("| # | measure | figure | target | |\n|---|---|---|---|---|\n");
    for r in rows {
        let mark = match r.verdict {
            Verdict::Met => "met",
            Verdict::Missed => "MISSED",
            Verdict::Info => "",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.scenario, r.measure, r.figure, r.target, mark
        ));
    }
    s
}

/// Waits for the disk to write back what earlier scenarios left dirty, so
/// that each scenario measures its own work.
pub(crate) fn settle_disk() {
    if let Err(e) = std::process::Command::new("sync").status() {
        eprintln!("storebench: sync did not run: {e}");
    }
}
