//! Prometheus metrics (CONTRACT.md, "Operations endpoints"): what the
//! server counts per request, and the store's telemetry read at each
//! scrape, in the OpenMetrics text format that `prometheus-client`
//! writes, or the classic text format for a client that does not ask for
//! OpenMetrics. Pure: store-http records into [`Metrics`] and serves the
//! exposition on a listener of its own.
//!
//! Route labels are the route table's names (`Endpoint::name`, plus the
//! few names of refusals), never paths, so the label sets stay bounded.

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use store_app::{CacheStats, Telemetry};
use store_core::ObjectKind;

/// The media type of the OpenMetrics text format, which Prometheus asks
/// for and reads.
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The classic Prometheus text format, answered to a client that does not
/// ask for OpenMetrics (curl, older scrapers), as Prometheus's own clients
/// do.
pub const PROMETHEUS_TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The route label of requests refused for the client's rate or share.
pub const ROUTE_RATE_LIMITED: &str = "rate_limited";
/// The lowest bucket of the request duration histogram, in seconds; each
/// next one doubles, up to about 8 s.
const DURATION_BUCKET_MIN_SECS: f64 = 0.000_25;
const DURATION_BUCKETS: u16 = 16;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

type Probe<T> = Box<dyn Fn() -> T + Send + Sync>;

/// Group commit: changes that waited for a flush, and the flushes that
/// served them (their ratio is the mean batch size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Changes that waited for a flush to be durable.
    pub commits: u64,
    /// Flushes that made them durable, each serving one or more changes.
    pub flushes: u64,
}

/// The server's metrics. Cheap to record into: a request costs two
/// lookups in a read-locked map and three atomic adds.
pub struct Metrics {
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
    rate_limited: Counter,
    connections_refused: Counter,
    cache: Option<Probe<CacheStats>>,
    commits: Option<Probe<CommitStats>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(
        DURATION_BUCKET_MIN_SECS,
        2.0,
        DURATION_BUCKETS,
    ))
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            durations: Family::new_with_constructor(duration_histogram),
            rate_limited: Counter::default(),
            connections_refused: Counter::default(),
            cache: None,
            commits: None,
        }
    }
}

impl Metrics {
    /// Adds the blob cache's hits and misses, read at each scrape.
    pub fn with_cache(mut self, probe: impl Fn() -> CacheStats + Send + Sync + 'static) -> Self {
        self.cache = Some(Box::new(probe));
        self
    }

    /// Adds the embedded store's group commit counts, read at each scrape.
    pub fn with_commits(mut self, probe: impl Fn() -> CommitStats + Send + Sync + 'static) -> Self {
        self.commits = Some(Box::new(probe));
        self
    }

    /// Counts one answered request: its route, status and the time to its
    /// response head.
    pub fn observe(&self, route: &'static str, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels { route, status })
            .inc();
        self.durations
            .get_or_create(&RouteLabels { route })
            .observe(took.as_secs_f64());
        if route == ROUTE_RATE_LIMITED {
            self.rate_limited.inc();
        }
    }

    /// Counts a connection closed with a 429 because its address held its
    /// share of connections.
    pub fn connection_refused(&self) {
        self.connections_refused.inc();
    }

    /// The exposition: the request series and `telemetry`, read just now.
    pub fn render(&self, telemetry: &Telemetry) -> String {
        let mut reg = Registry::default();
        self.register_requests(&mut reg);
        register_store(&mut reg, telemetry);
        if let Some(cache) = &self.cache {
            register_cache(&mut reg, cache());
        }
        if let Some(commits) = &self.commits {
            let c = commits();
            counter(
                &mut reg,
                "storesrv_group_commits",
                "Record changes that waited for a flush to disk (embedded store)",
                c.commits,
            );
            counter(
                &mut reg,
                "storesrv_group_commit_flushes",
                "Flushes to disk; commits per flush is the group commit's mean batch size",
                c.flushes,
            );
        }
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &reg);
        out
    }

    fn register_requests(&self, reg: &mut Registry) {
        reg.register(
            "storesrv_http_requests",
            "HTTP requests answered, by route and status",
            self.requests.clone(),
        );
        reg.register(
            "storesrv_http_request_duration_seconds",
            "Time from a request's arrival to its response head, by route",
            self.durations.clone(),
        );
        reg.register(
            "storesrv_rate_limited",
            "Requests refused with 429 rate_limited (the per-client rate or share)",
            self.rate_limited.clone(),
        );
        reg.register(
            "storesrv_connections_refused",
            "Connections refused because their address held its share",
            self.connections_refused.clone(),
        );
    }
}

fn gauge(reg: &mut Registry, name: &str, help: &str, value: u64) {
    reg.register(name, help, ConstGauge::new(value));
}

fn counter(reg: &mut Registry, name: &str, help: &str, value: u64) {
    reg.register(name, help, ConstCounter::new(value));
}

fn register_store(reg: &mut Registry, t: &Telemetry) {
    gauge(
        reg,
        "storesrv_pool_used_bytes",
        "Bytes the live objects and uploads in progress hold in the store pool",
        t.store_pool.used_bytes,
    );
    gauge(
        reg,
        "storesrv_pool_capacity_bytes",
        "The store pool's capacity",
        t.store_pool.capacity_bytes,
    );
    gauge(
        reg,
        "storesrv_pics_pool_used_bytes",
        "Bytes the galleries hold in the pics pool",
        t.pics_pool.used_bytes,
    );
    gauge(
        reg,
        "storesrv_pics_pool_capacity_bytes",
        "The pics pool's capacity",
        t.pics_pool.capacity_bytes,
    );
    let objects = Family::<KindLabels, Gauge>::default();
    for kind in ObjectKind::ALL {
        let n = i64::try_from(t.totals.of_kind(kind)).unwrap_or(i64::MAX);
        objects
            .get_or_create(&KindLabels { kind: kind.name() })
            .set(n);
    }
    reg.register("storesrv_objects", "Live records, by kind", objects);
    counter(
        reg,
        "storesrv_sweep_removed",
        "Expired objects removed by the sweeper",
        t.sweep_removed,
    );
    gauge(
        reg,
        "storesrv_sweep_lag_seconds",
        "How long ago the oldest record still stored expired (0 while the sweeper keeps up)",
        t.sweep_lag_secs,
    );
    counter(
        reg,
        "storesrv_import_refused",
        "Imports refused by the fetch guard or its limits",
        t.import_refused,
    );
    gauge(
        reg,
        "storesrv_media_jobs_running",
        "Image jobs decoding or encoding",
        t.media_jobs_running,
    );
    gauge(
        reg,
        "storesrv_media_jobs_queued",
        "Image jobs waiting for a slot",
        t.media_jobs_waiting,
    );
}

fn register_cache(reg: &mut Registry, c: CacheStats) {
    counter(
        reg,
        "storesrv_blob_cache_hits",
        "Blob reads served from memory",
        c.hits,
    );
    counter(
        reg,
        "storesrv_blob_cache_misses",
        "Blob reads that went to the store",
        c.misses,
    );
    gauge(
        reg,
        "storesrv_blob_cache_bytes",
        "Bytes the blob cache holds",
        c.bytes,
    );
}

/// The classic text format (version 0.0.4) of an OpenMetrics exposition:
/// the same samples, with each counter's HELP and TYPE naming its
/// `_total` series (OpenMetrics names the family without it), and without
/// OpenMetrics' closing `# EOF`.
pub fn prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines().filter(|l| *l != "# EOF") {
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let (name, rest) = line.strip_prefix(prefix)?.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {rest}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_count_by_route_and_status_and_the_histogram_follows() {
        let m = Metrics::default().with_cache(|| CacheStats {
            hits: 3,
            misses: 1,
            bytes: 10,
        });
        m.observe("get_file", 200, Duration::from_millis(3));
        m.observe("get_file", 200, Duration::from_millis(30));
        m.observe("get_file", 404, Duration::from_micros(100));
        m.observe(ROUTE_RATE_LIMITED, 429, Duration::from_micros(10));
        let mut t = Telemetry::default();
        t.totals.by_kind[ObjectKind::Dir.index()] = 4;
        t.store_pool.used_bytes = 1234;
        let text = m.render(&t);
        for line in [
            "storesrv_http_requests_total{route=\"get_file\",status=\"200\"} 2",
            "storesrv_http_requests_total{route=\"get_file\",status=\"404\"} 1",
            "storesrv_http_request_duration_seconds_count{route=\"get_file\"} 3",
            "storesrv_http_request_duration_seconds_bucket{le=\"0.004\",route=\"get_file\"} 2",
            "storesrv_http_request_duration_seconds_bucket{le=\"+Inf\",route=\"get_file\"} 3",
            "storesrv_rate_limited_total 1",
            "storesrv_objects{kind=\"dir\"} 4",
            "storesrv_objects{kind=\"file\"} 0",
            "storesrv_pool_used_bytes 1234",
            "storesrv_blob_cache_hits_total 3",
            "storesrv_blob_cache_misses_total 1",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "a whole OpenMetrics exposition");
        assert!(
            !text.contains("storesrv_group_commits"),
            "no probe, no series"
        );

        let classic = prometheus_text(&text);
        for line in [
            "# TYPE storesrv_http_requests_total counter",
            "# TYPE storesrv_rate_limited_total counter",
            "# TYPE storesrv_objects gauge",
            "# TYPE storesrv_http_request_duration_seconds histogram",
            "storesrv_rate_limited_total 1",
        ] {
            assert!(
                classic.lines().any(|l| l == line),
                "no {line:?} in:\n{classic}"
            );
        }
        assert!(classic
            .lines()
            .any(|l| l.starts_with("# HELP storesrv_rate_limited_total ")));
        assert!(!classic.contains("# EOF"));
        let samples = |t: &str| t.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(samples(&classic), samples(&text), "the same samples");
    }
}
