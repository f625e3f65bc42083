//! A fresh PostgreSQL database per test, in the cluster that
//! `STORE_TEST_DATABASE_URL` names (an account allowed to create
//! databases). `scripts/test` starts a throwaway cluster and sets it; a
//! test that needs PostgreSQL without it fails and says so. Databases are
//! made with `psql`, which comes with every PostgreSQL server package.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test cluster.
pub const URL_VAR: &str = "STORE_TEST_DATABASE_URL";

/// The cluster's URL, or a panic that says how to get one.
pub fn cluster_url() -> String {
    std::env::var(URL_VAR).unwrap_or_else(|_| {
        panic!(
            "no PostgreSQL for the tests: {URL_VAR} is not set. Run scripts/test, which starts a \
             throwaway cluster (or set {URL_VAR} to postgres://user:pass@127.0.0.1:port/postgres \
             for an account that may create databases)"
        )
    })
}

/// The start of the name of every database the tests make.
const NAME_PREFIX: &str = "storesrv_t";

/// Creates an empty database and answers its URL. First it drops the
/// databases that tests of this machine made in processes that have
/// ended: on a long-lived cluster they would pile up by the hundred
/// (about 13 MB each) and fill its disk.
pub fn fresh_database() -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let cluster = cluster_url();
    let tag = process_space_tag();
    if let Some(tag) = &tag {
        drop_ended_databases(&cluster, tag);
    }
    let name = format!(
        "{NAME_PREFIX}{}_{}_{}_{}",
        tag.as_deref().unwrap_or("0"),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    psql(&cluster, &format!("CREATE DATABASE {name}"));
    with_database(&cluster, &name)
}

/// Names the space this process's id is unique in: eight hex digits of
/// the machine's boot and the number of its PID namespace (containers on
/// one host share the boot). None where either cannot be read: then no
/// process can be told ended, and nothing is dropped.
fn process_space_tag() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let boot: String = boot
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    let space = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let space: String = space
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    (boot.len() == 8 && !space.is_empty()).then(|| format!("{boot}{space}"))
}

/// Drops the test databases of the processes of `tag`'s space that have
/// ended. Without FORCE: a database someone is still connected to stays
/// (a server its test left running, or a test this one cannot see) and is
/// tried again by the next sweep; so does one two sweeps race for.
fn drop_ended_databases(cluster: &str, tag: &str) {
    let prefix = format!("{NAME_PREFIX}{tag}_");
    let listed = psql(
        cluster,
        &format!("SELECT datname FROM pg_database WHERE starts_with(datname, '{prefix}')"),
    );
    for name in listed.lines() {
        // Only names this function could have made: digits and '_' after
        // the prefix, so that the name needs no quoting in the DROP.
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        if !rest.chars().all(|c| c.is_ascii_digit() || c == '_') {
            continue;
        }
        let ended = rest
            .split('_')
            .next()
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| {
                pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            });
        if ended {
            let _ = try_psql(cluster, &format!("DROP DATABASE IF EXISTS {name}"));
        }
    }
}

/// Cuts the database of `url` off (new connections refused, open ones
/// ended) or lets it be reached again: a database outage for one test,
/// with the rest of the cluster serving the others. Cutting off returns
/// once its last session has ended: `pg_terminate_backend` only asks.
pub fn set_reachable(url: &str, reachable: bool) {
    let name = database_of(url);
    psql(
        &cluster_url(),
        &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {reachable};"),
    );
    if !reachable {
        // Terminated again on every look: a session that was still
        // connecting when the database was closed shows up only after the
        // first round, and would otherwise stay (seen under load).
        let terminate = format!(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = '{name}' AND pid <> pg_backend_pid()) AS ended"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while psql(&cluster_url(), &terminate) != "0" {
            assert!(
                std::time::Instant::now() < deadline,
                "the sessions of {name} did not end in 20 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Moves every record's expiry in the database of `url` `secs` seconds
/// earlier, in its JSON and its indexed column alike: the store as it
/// will be `secs` seconds from now. Processes sharing a database decide
/// expiry by its clock, which a test cannot move (CONTRACT.md: one clock);
/// it moves the records instead.
pub fn age_records(url: &str, secs: i64) {
    let ms = secs * 1000;
    psql(
        url,
        &format!(
            "UPDATE store_objects SET expires_at = expires_at - {ms},
               body = jsonb_set(body, '{{lifetime,expires_at}}',
                   to_jsonb((body->'lifetime'->>'expires_at')::bigint - {ms}))
             WHERE expires_at IS NOT NULL"
        ),
    );
}

/// Runs `sql` (one transaction) in the database of `url` with `psql` and
/// answers what it printed, unaligned: the single value a `SELECT` of one
/// column and row selects. Panics with psql's message if it fails.
pub fn psql(url: &str, sql: &str) -> String {
    try_psql(url, sql).unwrap_or_else(|e| panic!("{e}"))
}

/// [`psql`], answering a failure instead of panicking.
fn try_psql(url: &str, sql: &str) -> Result<String, String> {
    let out = Command::new("psql")
        .arg(url)
        .args(["-v", "ON_ERROR_STOP=1", "-qtA", "-c", sql])
        .output()
        .map_err(|e| format!("cannot run psql (PostgreSQL's client): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "psql failed on {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The database name in `url`.
fn database_of(url: &str) -> &str {
    let base = url.split('?').next().unwrap_or(url);
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    after_scheme.split_once('/').map_or("", |(_, db)| db)
}

/// `url` with its database name replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let authority_end = base
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| base[start..].find('/').map(|j| start + j))
        .unwrap_or(base.len());
    let mut out = format!("{}/{name}", &base[..authority_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_read() {
        assert_eq!(database_of("postgres://u:p@127.0.0.1:5/db_1?x=y"), "db_1");
        assert_eq!(database_of("postgres://u:p@127.0.0.1:5"), "");
    }

    #[test]
    fn the_database_name_is_replaced() {
        assert_eq!(
            with_database("postgres://u:p@127.0.0.1:5/postgres", "x"),
            "postgres://u:p@127.0.0.1:5/x"
        );
        assert_eq!(
            with_database("postgres://u@h:5?sslmode=disable", "x"),
            "postgres://u@h:5/x?sslmode=disable"
        );
    }
}
