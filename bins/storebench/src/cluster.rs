//! Scenario 14: the several-process set-up of issue 14 behind nginx
//! (scripts/cluster: PostgreSQL and Garage durable, two storesrv
//! processes, nginx), beside the one-process sled server in the same run,
//! round by round. bench/run.sh starts the cluster and pins all of it to
//! the server core: the two set-ups get the same core, and the load
//! generators the other.

use crate::inproc::Fixtures;
use crate::scenarios::{fresh_on, mix_p99};
use crate::tools::{self, median, WrkResult};
use crate::{Bench, Row};

const KIB: usize = 1024;
const MB: f64 = 1_000_000.0;
/// The GET rate of the mix, as issue 14 sets it; uploads are a tenth of
/// the requests on top.
const MIX_GET_PER_SEC: f64 = 1000.0;

/// One figure per round, for the cluster and for sled.
#[derive(Default)]
struct Rounds {
    cluster: Vec<f64>,
    sled: Vec<f64>,
    cluster_p99: Vec<f64>,
}

impl Rounds {
    fn add(&mut self, cluster: f64, sled: f64, cluster_p99: f64) {
        self.cluster.push(cluster);
        self.sled.push(sled);
        self.cluster_p99.push(cluster_p99);
    }

    fn ratio(&self) -> f64 {
        let ratios = self
            .cluster
            .iter()
            .zip(&self.sled)
            .map(|(c, s)| c / s)
            .collect();
        median(ratios)
    }
}

/// Runs the scenario against the cluster at `url` and answers its rows.
pub fn scenarios(bench: &Bench, f: &Fixtures, url: &str) -> Vec<Row> {
    let sled = fresh_on(bench, "cluster-sled", None);
    let dir = sled.dir.0.clone();
    let paths = |base: &str| {
        (
            tools::upload_to(base, "1k.bin", &f.small),
            tools::upload_to(base, "5m.bin", &f.large),
        )
    };
    let (c_small, c_large) = paths(url);
    let (s_small, s_large) = paths(&sled.s.base);
    let (mut small, mut large, mut uploads) =
        (Rounds::default(), Rounds::default(), Rounds::default());
    for round in 0..bench.rounds {
        let run = |base: &str, path: &str, conns: u32, method: &str, body: usize| {
            tools::wrk(
                &dir,
                &format!("{base}{path}"),
                conns,
                bench.secs,
                method,
                body,
            )
        };
        let pair = |a: WrkResult, b: WrkResult, what: &str| {
            assert_eq!(a.errors + b.errors, 0.0, "errors in scenario 14: {what}");
            (a, b)
        };
        let (a, b) = pair(
            run(url, &c_small, 64, "GET", 0),
            run(&sled.s.base, &s_small, 64, "GET", 0),
            "GET 1 KiB",
        );
        small.add(a.rps(), b.rps(), a.p99_ms);
        let (c, d) = pair(
            run(url, &c_large, 8, "GET", 0),
            run(&sled.s.base, &s_large, 8, "GET", 0),
            "GET 5 MiB",
        );
        large.add(c.bytes_per_sec() / MB, d.bytes_per_sec() / MB, c.p99_ms);
        let (e, g) = pair(
            run(url, "/?name=small.bin", 64, "POST", KIB),
            run(&sled.s.base, "/?name=small.bin", 64, "POST", KIB),
            "upload 1 KiB",
        );
        uploads.add(e.rps(), g.rps(), e.p99_ms);
        println!(
            "  14 round {round}: cluster GET 1 KiB {:.0} req/s (p99 {:.2} ms; sled {:.0}), GET 5 MiB {:.0} MB/s (sled {:.0}), uploads {:.0}/s (p99 {:.1} ms; sled {:.0})",
            a.rps(),
            a.p99_ms,
            b.rps(),
            c.bytes_per_sec() / MB,
            d.bytes_per_sec() / MB,
            e.rps(),
            e.p99_ms,
            g.rps()
        );
    }
    let mut rows = report(&small, &large, &uploads);
    rows.push(mix(bench, f, url, &dir));
    rows
}

fn report(small: &Rounds, large: &Rounds, uploads: &Rounds) -> Vec<Row> {
    let upload_rate = median(uploads.cluster.clone());
    vec![
        Row::new(
            "14",
            "cluster behind nginx: GET 1 KiB, 64 connections: cluster/sled req/s, cluster p99",
            format!(
                "{:.2}x ({:.0} vs {:.0} req/s), p99 {:.2} ms",
                small.ratio(),
                median(small.cluster.clone()),
                median(small.sled.clone()),
                median(small.cluster_p99.clone())
            ),
            "reported",
            None,
        ),
        Row::new(
            "14",
            "cluster: GET 5 MiB, 8 connections: cluster/sled MB/s",
            format!(
                "{:.2}x ({:.0} vs {:.0} MB/s)",
                large.ratio(),
                median(large.cluster.clone()),
                median(large.sled.clone())
            ),
            "reported",
            None,
        ),
        Row::new(
            "14",
            "cluster: upload 1 KiB, 64 connections, durable (PostgreSQL and Garage fsync)",
            format!(
                "{upload_rate:.0} uploads/s, p99 {:.1} ms (sled {:.0}/s)",
                median(uploads.cluster_p99.clone()),
                median(uploads.sled.clone())
            ),
            ">= 300/s",
            Some(upload_rate >= 300.0),
        ),
    ]
}

/// The mix on the cluster: GETs of a cached 1 KiB file at 1,000/s and
/// uploads at a ninth of that (a tenth of all requests), with oha's
/// latency correction.
fn mix(bench: &Bench, f: &Fixtures, url: &str, dir: &std::path::Path) -> Row {
    let (g, u) = mix_p99(bench, (url, dir), f, MIX_GET_PER_SEC / 0.9, "14 mix");
    Row::new(
        "14",
        format!(
            "cluster: 90% GET / 10% upload at {:.0} GET/s",
            MIX_GET_PER_SEC
        ),
        format!("p99 GET {g:.2} ms, upload {u:.2} ms"),
        "p99 < 10 ms",
        Some(g.max(u) < 10.0),
    )
}
