//! A fresh PostgreSQL database per test, in the cluster that
//! `STORE_TEST_DATABASE_URL` names (an account allowed to create
//! databases). `scripts/test` starts a throwaway cluster and sets it; a
//! test that needs PostgreSQL without it fails and says so. Databases are
//! made with `psql`, which comes with every PostgreSQL server package.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

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

/// Creates an empty database and answers its URL, and drops the databases
/// that tests of this machine made in processes that have ended: on a
/// long-lived cluster they would pile up by the hundred (about 13 MB each)
/// and fill its disk. Two `psql` sessions in all, whatever it drops: every
/// test on PostgreSQL starts here, and a session costs a process, a TLS
/// handshake and a login.
pub fn fresh_database() -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let cluster = cluster_url();
    let tag = process_space_tag();
    let name = format!(
        "{NAME_PREFIX}{}_{}_{}_{}",
        tag.as_deref().unwrap_or("0"),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let prefix = format!("{NAME_PREFIX}{}_", tag.as_deref().unwrap_or("0"));
    let listed = psql_each(
        &cluster,
        &[
            "SHOW server_version_num",
            "SHOW fsync",
            &format!("SELECT datname FROM pg_database WHERE starts_with(datname, '{prefix}')"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut lines = listed.lines();
    let version: u32 = lines.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    let fsync = lines.next() != Some("off");
    // PostgreSQL 15 copies the template block by block through the WAL by
    // default: four times the server's CPU of copying its files, for a
    // database that lives one test. Copying files takes two checkpoints,
    // cheap only on a cluster without fsync (scripts/pg-cluster's).
    let strategy = if version >= 150_000 && !fsync {
        " STRATEGY FILE_COPY"
    } else {
        ""
    };
    let mut script = vec![format!("CREATE DATABASE {name}{strategy}")];
    if tag.is_some() {
        // A failed drop must not fail the test: from here on, psql goes on
        // past errors (and the CREATE above has already stopped it on its
        // own error).
        let ended = ended_databases(lines, &prefix);
        if !ended.is_empty() {
            script.push("\\set ON_ERROR_STOP 0".to_string());
            script.extend(ended.iter().map(|n| format!("DROP DATABASE IF EXISTS {n}")));
            // psql's status is its last command's: one that cannot fail.
            script.push("\\set ON_ERROR_STOP 1".to_string());
        }
    }
    let script: Vec<&str> = script.iter().map(String::as_str).collect();
    psql_each(&cluster, &script).unwrap_or_else(|e| panic!("{e}"));
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

/// Of the `listed` test databases of this process space (their names start
/// with `prefix`), those whose process has ended. Dropped without FORCE: a
/// database someone is still connected to stays (a server its test left
/// running, or a test this one cannot see) and is tried again by the next
/// sweep; so does one two sweeps race for.
fn ended_databases<'a>(listed: impl Iterator<Item = &'a str>, prefix: &str) -> Vec<&'a str> {
    listed
        .filter(|name| {
            // Only names fresh_database could have made: digits and '_'
            // after the prefix, so that the name needs no quoting.
            let Some(rest) = name.strip_prefix(prefix) else {
                return false;
            };
            rest.chars().all(|c| c.is_ascii_digit() || c == '_')
                && rest
                    .split('_')
                    .next()
                    .and_then(|pid| pid.parse::<u32>().ok())
                    .is_some_and(|pid| {
                        pid != std::process::id()
                            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
                    })
        })
        .collect()
}

/// Cuts the database of `url` off (new connections refused, open ones
/// ended) or lets it be reached again: a database outage for one test,
/// with the rest of the cluster serving the others. Cutting off returns
/// once its last session has ended: `pg_terminate_backend` only asks.
pub fn set_reachable(url: &str, reachable: bool) {
    let name = database_of(url);
    allow_connections(url, reachable);
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
pub fn try_psql(url: &str, sql: &str) -> Result<String, String> {
    psql_each(url, &[sql])
}

/// Runs each of `commands` (SQL, or one backslash command) in turn in one
/// session, stopping at the first that fails, and answers what they
/// printed, unaligned.
fn psql_each(url: &str, commands: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new(psql_program());
    cmd.arg(url).args(["-v", "ON_ERROR_STOP=1", "-qtA"]);
    for c in commands {
        cmd.args(["-c", c]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run psql (PostgreSQL's client): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "psql failed on {commands:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The psql to run: the newest of the server packages' own
/// (`/usr/lib/postgresql/<version>/bin/psql` on Debian and Ubuntu), else
/// the one on PATH. Debian's `psql` on PATH is a Perl script that picks a
/// version and then runs that one, which more than doubled the CPU of
/// each call; the tests make a thousand. (So a psql put first on PATH is
/// not the one run where a server package is installed.)
pub fn psql_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let newest = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| {
                let version: u32 = e.file_name().to_str()?.parse().ok()?;
                let psql = e.path().join("bin/psql");
                psql.is_file().then_some((version, psql))
            })
            .max_by_key(|(version, _)| *version);
        newest.map_or_else(|| PathBuf::from("psql"), |(_, psql)| psql)
    })
}

/// Refuses new sessions of the database of `url`, or lets them in again;
/// open ones stay. Panics with psql's message if it fails.
pub fn allow_connections(url: &str, allowed: bool) {
    let name = database_of(url);
    psql(
        &cluster_url(),
        &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {allowed};"),
    );
}

/// The database name in `url`.
pub fn database_of(url: &str) -> &str {
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
