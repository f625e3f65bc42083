//! Scenarios 1, 3 and 5 with the records in PostgreSQL (issue 13), beside
//! the same scenarios on sled in the same run, A/B round by round: the
//! ratio PostgreSQL/sled is the figure, nginx the common reference.
//!
//! PostgreSQL runs durable (fsync on) and pinned to the server core with
//! storesrv (bench/run.sh): the service under test is the two together.

use store_testkit::pg;

use crate::inproc::Fixtures;
use crate::scenarios::{fresh_on, mix_p99, Scenario};
use crate::tools::{self, median, Nginx, WrkResult};
use crate::{Bench, Row};

const NGINX_PORT: u16 = 18_083;
const KIB: usize = 1024;

/// A new database in the cluster of `url`, answered as its URL. Two
/// statements, since neither may run inside a transaction.
fn fresh_database(url: &str, name: &str) -> String {
    pg::psql(url, &format!("DROP DATABASE IF EXISTS {name}"));
    pg::psql(url, &format!("CREATE DATABASE {name}"));
    pg::with_database(url, name)
}

/// Both servers of the comparison.
struct Pair {
    sled: Scenario,
    pg: Scenario,
}

impl Pair {
    fn start(bench: &Bench, name: &str, url: &str) -> Self {
        let database = fresh_database(url, &format!("storebench_{name}"));
        Self {
            sled: fresh_on(bench, &format!("{name}-sled"), None),
            pg: fresh_on(bench, &format!("{name}-pg"), Some(&database)),
        }
    }
}

/// One wrk figure per round, for sled and PostgreSQL.
#[derive(Default)]
struct Rounds {
    sled: Vec<f64>,
    pg: Vec<f64>,
    ratios: Vec<f64>,
    pg_p99: Vec<f64>,
}

impl Rounds {
    fn add(&mut self, sled: &WrkResult, pg: &WrkResult) {
        self.sled.push(sled.rps());
        self.pg.push(pg.rps());
        self.ratios.push(pg.rps() / sled.rps());
        self.pg_p99.push(pg.p99_ms);
    }
}

/// Runs the three scenarios and answers their rows.
pub fn scenarios(bench: &Bench, f: &Fixtures, url: &str) -> Vec<Row> {
    let mut rows = vec![];
    let (get_rows, pg_gets) = gets(bench, f, url);
    rows.extend(get_rows);
    let (upload_rows, pg_uploads) = uploads(bench, url);
    rows.extend(upload_rows);
    rows.extend(mix(bench, f, url, pg_gets, pg_uploads));
    rows
}

/// Scenario 1: GET 1 KiB with 64 connections from sled, PostgreSQL and
/// nginx in turn. Answers PostgreSQL's rate.
fn gets(bench: &Bench, f: &Fixtures, url: &str) -> (Vec<Row>, f64) {
    let pair = Pair::start(bench, "gets", url);
    let www = pair.sled.dir.0.join("www");
    std::fs::create_dir_all(&www).expect("www");
    std::fs::write(www.join("1k.bin"), &f.small).expect("1k");
    let nginx = Nginx::start(&pair.sled.dir.0, &www, NGINX_PORT);
    let paths = [&pair.sled, &pair.pg].map(|run| run.s.upload("1k.bin", &f.small));
    let dir = &pair.sled.dir.0;
    let (mut r, mut to_nginx) = (Rounds::default(), vec![]);
    for round in 0..bench.rounds {
        let get = |base: &str, path: &str| {
            tools::wrk(dir, &format!("{base}{path}"), 64, bench.secs, "GET", 0)
        };
        let a = get(&pair.sled.s.base, &paths[0]);
        let b = get(&pair.pg.s.base, &paths[1]);
        let n = get(&nginx.base, "/1k.bin");
        assert_eq!(
            a.errors + b.errors + n.errors,
            0.0,
            "errors in scenario 1 (PostgreSQL)"
        );
        println!(
            "  1 pg round {round}: sled {:.0} req/s, PostgreSQL {:.0} req/s (p99 {:.2} ms), nginx {:.0} req/s",
            a.rps(),
            b.rps(),
            b.p99_ms,
            n.rps()
        );
        r.add(&a, &b);
        to_nginx.push(b.rps() / n.rps());
    }
    let rate = median(r.pg.clone());
    let (to_nginx, p99) = (median(to_nginx), median(r.pg_p99));
    let rows = vec![
        Row::new(
            "1 pg",
            "GET 1 KiB, 64 connections, records in PostgreSQL: PostgreSQL/sled req/s",
            format!(
                "{:.2}x ({rate:.0} vs {:.0} req/s)",
                median(r.ratios),
                median(r.sled)
            ),
            "reported",
            None,
        ),
        Row::new(
            "1 pg",
            "the same: PostgreSQL/nginx req/s, and p99",
            format!("{to_nginx:.2}x, p99 {p99:.2} ms"),
            ">= 0.7x, < 5 ms",
            Some(to_nginx >= 0.7 && p99 < 5.0),
        ),
    ];
    (rows, rate)
}

/// Scenario 3: durable 1 KiB uploads with 64 connections, sled and
/// PostgreSQL in turn. Answers PostgreSQL's rate.
fn uploads(bench: &Bench, url: &str) -> (Vec<Row>, f64) {
    let pair = Pair::start(bench, "uploads", url);
    let dir = &pair.sled.dir.0;
    let mut r = Rounds::default();
    for round in 0..bench.rounds {
        let post = |base: &str| {
            tools::wrk(
                dir,
                &format!("{base}/?name=small.bin"),
                64,
                bench.secs,
                "POST",
                KIB,
            )
        };
        let a = post(&pair.sled.s.base);
        let b = post(&pair.pg.s.base);
        assert_eq!(
            a.errors + b.errors,
            0.0,
            "refused uploads in scenario 3 (PostgreSQL)"
        );
        println!(
            "  3 pg round {round}: sled {:.0} uploads/s, PostgreSQL {:.0} uploads/s (p99 {:.1} ms)",
            a.rps(),
            b.rps(),
            b.p99_ms
        );
        r.add(&a, &b);
    }
    let rate = median(r.pg.clone());
    let rows = vec![Row::new(
        "3 pg",
        "upload 1 KiB, 64 connections, durable, records in PostgreSQL: PostgreSQL/sled",
        format!(
            "{:.2}x ({rate:.0} vs {:.0} uploads/s)",
            median(r.ratios),
            median(r.sled)
        ),
        ">= 2000/s",
        Some(rate >= 2000.0),
    )];
    (rows, rate)
}

/// Scenario 5: the mix, on both, at half of what PostgreSQL saturates at:
/// the same offered load, so the latencies compare.
fn mix(bench: &Bench, f: &Fixtures, url: &str, get_rps: f64, upload_rps: f64) -> Vec<Row> {
    let pair = Pair::start(bench, "mix", url);
    let max = 1.0 / (0.9 / get_rps + 0.1 / upload_rps);
    let rate = max / 2.0;
    let (sg, su) = mix_p99(
        bench,
        (&pair.sled.s.base, &pair.sled.dir.0),
        f,
        rate,
        "5 sled",
    );
    let (pg, pu) = mix_p99(bench, (&pair.pg.s.base, &pair.pg.dir.0), f, rate, "5 pg");
    vec![Row::new(
        "5 pg",
        format!("90% GET / 10% upload at {rate:.0} req/s, records in PostgreSQL (sled at the same rate)"),
        format!("p99 GET {pg:.2} ms, upload {pu:.2} ms (sled {sg:.2} ms, {su:.2} ms)"),
        "p99 < 10 ms",
        Some(pg.max(pu) < 10.0),
    )]
}
