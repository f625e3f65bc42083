//! Configuration exactly as CONTRACT.md's table: flags, each with an env
//! variable, and a flag wins over its variable.

use std::net::SocketAddr;
use std::path::PathBuf;

use store_core::{Limits, ServerLimits};
use store_s3::S3Config;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// Where `/metrics` is served (CONTRACT.md, "Operations endpoints");
    /// `None`: nowhere, and nothing is counted.
    pub metrics_listen: Option<SocketAddr>,
    pub data: PathBuf,
    /// `None` means `http://<bound addr>`, known only after binding.
    pub base_url: Option<String>,
    /// Comma-separated; empty means retention is off.
    pub retain_tokens: String,
    pub superadmin_token: Option<String>,
    /// STORE_UPLOAD_TOKEN: when set, creating anything needs it. Its Debug
    /// never shows it.
    pub upload_token: store_core::UploadToken,
    /// STORE_ADMIN_TOKEN: moderation (issue 36). Its Debug never shows it.
    pub admin_token: store_core::moderation::AdminToken,
    /// STORE_PICS_UPLOADS: `open` (SPEC.md) or `admin`.
    pub gallery_uploads: store_core::gallery::GalleryUploads,
    /// Every limit, SPEC.md's unless a setting changes it: the pools, the
    /// rate, the show-dir bytes, the file and pics upload sizes and the
    /// single files' ttl bounds (see [`limits`]), and the server's guards
    /// against greedy or hostile clients (`limits.server`, see [`guards`]).
    pub limits: Limits,
    pub trusted_proxies: Vec<String>,
    pub import_allow_private: bool,
    /// STORE_WEBHOOK_URL and STORE_WEBHOOK_SECRET: where events go, and
    /// the key they are signed with.
    pub webhook: Option<WebhookSetting>,
    /// STORE_CLAMD: the clamd every upload is scanned by.
    pub clamd: Option<store_clamd::Clamd>,
    /// STORE_DATABASE_URL: records in PostgreSQL instead of sled.
    pub database_url: Option<Secret>,
    /// STORE_DELETE_GRACE_SECS: how long bytes that records stopped naming
    /// wait in PostgreSQL's deletion queue before they are deleted.
    pub delete_grace_secs: u64,
    /// STORE_DISK_CACHE_BYTES: with STORE_S3_*, how many bytes of large
    /// blobs each process keeps copies of under `data` (0: none).
    pub disk_cache_bytes: u64,
    /// STORE_S3_*: bytes in an S3-compatible store instead of under `data`
    /// (CONTRACT.md, "More than one machine"). Its Debug never shows the
    /// secret.
    pub s3: Option<S3Config>,
}

/// The region signed for unless STORE_S3_REGION says otherwise.
const S3_REGION_DEFAULT: &str = "us-east-1";

/// The S3 settings: none unless STORE_S3_ENDPOINT is set, and then the
/// bucket and both credentials are required.
fn s3_settings(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<S3Config>, String> {
    let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let Some(endpoint) = get("STORE_S3_ENDPOINT") else {
        let stray = [
            "STORE_S3_BUCKET",
            "STORE_S3_ACCESS_KEY_ID",
            "STORE_S3_SECRET_ACCESS_KEY",
        ]
        .into_iter()
        .find(|n| get(n).is_some());
        return match stray {
            Some(n) => Err(format!("{n} is set but STORE_S3_ENDPOINT is not")),
            None => Ok(None),
        };
    };
    let need = |name: &str| {
        get(name).ok_or_else(|| format!("STORE_S3_ENDPOINT is set, so {name} is needed too"))
    };
    Ok(Some(S3Config {
        endpoint: endpoint.trim().to_string(),
        bucket: need("STORE_S3_BUCKET")?,
        region: get("STORE_S3_REGION").unwrap_or_else(|| S3_REGION_DEFAULT.to_string()),
        access_key_id: need("STORE_S3_ACCESS_KEY_ID")?,
        secret_access_key: need("STORE_S3_SECRET_ACCESS_KEY")?,
        prefix: get("STORE_S3_PREFIX").unwrap_or_default(),
        part_bytes: store_s3::PART_BYTES_DEFAULT,
    }))
}

/// Webhooks (STORE_WEBHOOK_URL, STORE_WEBHOOK_SECRET,
/// STORE_WEBHOOK_ALLOW_PRIVATE); the secret's Debug never shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSetting {
    pub url: String,
    pub secret: store_core::events::WebhookSecret,
    /// Whether the URL may name a private or loopback address.
    pub allow_private: bool,
    /// How long a delivery may take, and so the pace of retries
    /// (STORE_WEBHOOK_TIMEOUT_MS, for tests).
    pub pace: store_core::events::DeliveryPace,
}

/// The webhook settings, all or none: a URL without a secret (or the
/// other way round) stops the server at start.
fn webhook(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<WebhookSetting>, String> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    match (set("STORE_WEBHOOK_URL"), set("STORE_WEBHOOK_SECRET")) {
        (None, None) => Ok(None),
        (Some(url), Some(secret)) => Ok(Some(WebhookSetting {
            url: url.trim().to_string(),
            secret: store_core::events::WebhookSecret::parse(&secret)?,
            allow_private: env("STORE_WEBHOOK_ALLOW_PRIVATE").as_deref() == Some("1"),
            pace: store_core::events::DeliveryPace {
                timeout_ms: env_number(
                    env,
                    "STORE_WEBHOOK_TIMEOUT_MS",
                    store_core::events::DELIVERY_TIMEOUT_MS,
                )?
                .max(1),
            },
        })),
        (Some(_), None) => Err(
            "STORE_WEBHOOK_URL needs STORE_WEBHOOK_SECRET (whsec_$(openssl rand -base64 32))"
                .into(),
        ),
        (None, Some(_)) => Err("STORE_WEBHOOK_SECRET is set but STORE_WEBHOOK_URL is not".into()),
    }
}

/// A setting that carries a password: its Debug form never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&store_pg::redact_url(&self.0))
    }
}

/// What `--help` prints: every setting, its defaults taken from
/// `Limits::DEFAULT`, `ServerLimits::DEFAULT` and store-pg's grace, so that
/// no number is written twice. Long because it is the help text, which
/// reads best whole.
pub fn usage() -> String {
    let (l, g) = (Limits::DEFAULT, ServerLimits::DEFAULT);
    format!(
        "\
storesrv: an ephemeral file store over HTTP

usage: storesrv [--listen ADDR] [--data DIR] [--base-url URL] [--metrics-listen ADDR]
                [--max-file-bytes N]
       storesrv migrate --from-data DIR [--data DIR]

  --listen ADDR     address to bind (env STORE_LISTEN; default 127.0.0.1:8080; port 0 picks one)
  --data DIR        where records and bytes live (env STORE_DATA; default ./data)
  --base-url URL    prefix of every URL handed out (env STORE_BASE_URL; default http://<bound addr>)
  --metrics-listen ADDR  serve Prometheus metrics at http://ADDR/metrics, on a listener of
                    their own (env STORE_METRICS_LISTEN; default: none). Keep it private.
  --max-file-bytes N  largest single file, bundle member or dir file (env STORE_MAX_FILE_BYTES;
                    default {file}); import stores at most this or {import}, the smaller

environment only:
  STORE_RETAIN_TOKEN        comma-separated retain tokens (unset: retention off)
  STORE_SUPERADMIN_TOKEN    administers every gallery
  STORE_UPLOAD_TOKEN        when set, creating anything (files, bundles, dirs, galleries,
                            gallery images) needs it or a retain token, as
                            Authorization: Bearer <token>, token=<token> or a form's token
                            field; reading stays open
  STORE_WEBHOOK_URL         where signed events (Standard Webhooks) are POSTed: object.created,
                            .deleted, .expired, .reported and .blocked; needs
  STORE_WEBHOOK_SECRET      whsec_ and a key in base64 (whsec_$(openssl rand -base64 32))
  STORE_WEBHOOK_ALLOW_PRIVATE=1  let the webhook URL name a private or loopback address
  STORE_WEBHOOK_TIMEOUT_MS  a delivery's time-out (default 15000); the retries' pauses
                            (5 s, 30 s, then growing for 24 h) scale with it (tests)
  STORE_CLAMD               unix:/path/to/clamd.sock or tcp:host:port: every upload is scanned
                            by ClamAV before it is stored (422 infected; 503 while clamd is
                            out of reach); clamd's StreamMaxLength must allow the largest upload
  STORE_ADMIN_TOKEN         moderation: GET /admin lists, searches, deletes and blocks
                            (Authorization: Bearer <token>); unset, /admin is 404
  STORE_PICS_UPLOADS        open (default): anyone with a gallery's link adds images;
                            admin: only its admin (or the superadmin), on the admin page or
                            POST /pics/g/<gid>/<admin token>?upload=1
  STORE_RATE_LIMIT_PER_MIN  requests per minute per client IP (default {rate}; 0 = off)
  STORE_POOL_BYTES          store pool (default {pool})
  STORE_PICS_POOL_BYTES     pics pool (default {pics_pool})
  STORE_SHOW_DIR_BYTES      bytes anonymous writers may put in one show-dir (default: a tenth of the pool)
  STORE_MAX_PICS_UPLOAD_BYTES  largest gallery image upload (default {pics_upload}); gallery
                            import stores at most this or {pics_import}, the smaller
  STORE_TTL_DEFAULT, STORE_TTL_MIN, STORE_TTL_MAX  a single file's or bundle's lifetime when
                            none is asked for, and the bounds a ttl is clamped to, as <N>h
                            or <N>d (defaults {ttl_default}, {ttl_min}, {ttl_max})
  STORE_UPLOAD_LEASE_SECS   how long a resumable upload waits for a PATCH whose process
                            died before another may go on (default {lease}; renewed
                            four times as often while the PATCH lives)
  STORE_TRUSTED_PROXIES     IPs or CIDRs whose X-Forwarded-For is believed
  STORE_IMPORT_ALLOW_PRIVATE=1  let import reach private hosts (tests only)
  STORE_DATABASE_URL        postgres://user:pass@host:port/db: records, locks, pools and the
                            rate limit in PostgreSQL, shared by every process using it
  STORE_S3_ENDPOINT         e.g. http://127.0.0.1:3900: bytes in this S3-compatible store
  STORE_S3_BUCKET           the bucket (it must exist)
  STORE_S3_REGION           the region the store expects (default us-east-1)
  STORE_S3_ACCESS_KEY_ID, STORE_S3_SECRET_ACCESS_KEY   credentials (never logged)
  STORE_S3_PREFIX           key prefix, so that several services can share a bucket
  STORE_DELETE_GRACE_SECS   with STORE_DATABASE_URL: how long bytes no record names any more
                            wait before they are deleted, so that downloads which began
                            before outlive them (default {grace})
  STORE_DISK_CACHE_BYTES    with STORE_S3_*: bytes of copies of large files kept under --data,
                            read instead of the bucket (default {disk_cache}; 0 for none)

migrate: copies the sled store in --from-data (stopped) into the PostgreSQL
database of STORE_DATABASE_URL, and its bytes into the bucket of STORE_S3_*
(or into --data without one), keeping every id.
It may be run again after an interruption, checks counts and bytes at the
end, and prints its report as JSON. The same directory for both moves the
records alone.

guards against greedy clients (0 turns a cap off):
  STORE_CONNECTIONS_PER_IP      connections one address may hold (default {conns})
  STORE_REQUESTS_PER_IP         requests one client may have in flight (default {reqs})
  STORE_HEADER_TIMEOUT_SECS     time to send request headers, and keep-alive idle (default {header})
  STORE_SEND_TIMEOUT_SECS       a client accepting no byte this long is dropped (default {send})
  STORE_BODY_TIMEOUT_SECS       a body's idle limit, and its grace before the rate counts (default {body})
  STORE_BODY_MIN_BYTES_PER_SEC  slowest body accepted, after the grace (default {pace})
  STORE_BODIES_IN_FLIGHT_BYTES  bytes of bodies received at once, all clients (default {in_flight})
",
        file = l.file_bytes_max,
        import = l.import_bytes_max,
        rate = l.rate_limit_per_min,
        pool = l.pool_bytes,
        pics_pool = l.pics_pool_bytes,
        lease = l.upload_lease_secs,
        pics_upload = l.pics_upload_bytes_max,
        pics_import = l.pics_import_bytes_max,
        ttl_default = hours_or_days(l.file_ttl_default_secs),
        ttl_min = hours_or_days(l.file_ttl_min_secs),
        ttl_max = hours_or_days(l.file_ttl_max_secs),
        grace = store_pg::DELETE_GRACE.as_secs(),
        disk_cache = DISK_CACHE_BYTES,
        conns = g.connections_per_client_max,
        reqs = g.requests_per_client_max,
        header = g.header_timeout_secs,
        send = g.send_timeout_secs,
        body = g.body_timeout_secs,
        pace = g.body_min_bytes_per_sec,
        in_flight = g.bodies_in_flight_bytes_max,
    )
}

/// A lifetime as the usage writes it: whole days as `<N>d`, else `<N>h`.
fn hours_or_days(secs: u64) -> String {
    const DAY_SECS: u64 = 86_400;
    if secs % DAY_SECS == 0 {
        format!("{}d", secs / DAY_SECS)
    } else {
        format!("{}h", secs / 3_600)
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Box<Config>),
    /// `storesrv migrate --from-data DIR`: the sled store in `from_data`
    /// into the configured database and blob store.
    Migrate {
        config: Box<Config>,
        from_data: PathBuf,
    },
    Help,
    Version,
}

fn number<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("{name} must be a non-negative integer, got {value:?}"))
}

/// The environment's number `name`, or `default` when it is unset or
/// empty.
fn env_number(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    default: u64,
) -> Result<u64, String> {
    env(name)
        .filter(|v| !v.is_empty())
        .map_or(Ok(default), |v| number(name, &v))
}

/// Parses arguments (without the program name) and the environment, given
/// as a lookup so that tests need not touch the process environment.
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Command, String> {
    let migrating = args.first().is_some_and(|a| a == "migrate");
    let mut flags = match flags(&args[usize::from(migrating)..], migrating)? {
        Ok(flags) => flags,
        Err(command) => return Ok(command),
    };
    let from_data = flags.from_data.take();
    let config = settings(flags, env)?;
    if !migrating {
        return Ok(Command::Run(config));
    }
    let from_data = from_data.ok_or("migrate needs --from-data DIR: the sled store to copy")?;
    if config.database_url.is_none() {
        return Err(
            "migrate needs STORE_DATABASE_URL: the PostgreSQL database to copy into".into(),
        );
    }
    Ok(Command::Migrate {
        config,
        from_data: PathBuf::from(from_data),
    })
}

/// The command line's flags.
#[derive(Default)]
struct Flags {
    listen: Option<String>,
    data: Option<String>,
    base_url: Option<String>,
    metrics_listen: Option<String>,
    max_file_bytes: Option<String>,
    from_data: Option<String>,
}

/// Reads the flags, or answers the command a flag asked for instead
/// (`--help`, `--version`). `--from-data` belongs to `migrate` only.
fn flags(args: &[String], migrating: bool) -> Result<Result<Flags, Command>, String> {
    let mut f = Flags::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |slot: &mut Option<String>| -> Result<(), String> {
            let v = match inline.clone() {
                Some(v) => v,
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))?,
            };
            *slot = Some(v);
            Ok(())
        };
        match flag {
            "--listen" => value(&mut f.listen)?,
            "--data" => value(&mut f.data)?,
            "--base-url" => value(&mut f.base_url)?,
            "--metrics-listen" => value(&mut f.metrics_listen)?,
            "--max-file-bytes" => value(&mut f.max_file_bytes)?,
            "--from-data" if migrating => value(&mut f.from_data)?,
            "-h" | "--help" => return Ok(Err(Command::Help)),
            "-V" | "--version" => return Ok(Err(Command::Version)),
            other => return Err(format!("unknown argument {other:?}\n\n{}", usage())),
        }
    }
    Ok(Ok(f))
}

/// The configuration from the flags given and the environment.
fn settings(flags: Flags, env: &dyn Fn(&str) -> Option<String>) -> Result<Box<Config>, String> {
    let listen = flags
        .listen
        .or_else(|| env("STORE_LISTEN"))
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let listen: SocketAddr = listen
        .parse()
        .map_err(|_| format!("--listen: {listen:?} is not an address like 127.0.0.1:8080"))?;
    let base_url = flags
        .base_url
        .or_else(|| env("STORE_BASE_URL"))
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('/').to_string());
    if let Some(url) = &base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "--base-url: {url:?} must start with http:// or https://"
            ));
        }
    }
    let metrics_listen = flags
        .metrics_listen
        .or_else(|| env("STORE_METRICS_LISTEN"))
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            a.trim().parse().map_err(|_| {
                format!("--metrics-listen: {a:?} is not an address like 127.0.0.1:9090")
            })
        })
        .transpose()?;
    Ok(Box::new(Config {
        listen,
        metrics_listen,
        data: PathBuf::from(
            flags
                .data
                .or_else(|| env("STORE_DATA"))
                .unwrap_or_else(|| "./data".into()),
        ),
        base_url,
        retain_tokens: env("STORE_RETAIN_TOKEN").unwrap_or_default(),
        superadmin_token: env("STORE_SUPERADMIN_TOKEN").filter(|t| !t.is_empty()),
        upload_token: store_core::UploadToken::new(env("STORE_UPLOAD_TOKEN").as_deref()),
        admin_token: store_core::moderation::AdminToken::new(env("STORE_ADMIN_TOKEN").as_deref()),
        gallery_uploads: gallery_uploads(env)?,
        limits: Limits {
            server: guards(env)?,
            ..limits(flags.max_file_bytes, env)?
        },
        trusted_proxies: env("STORE_TRUSTED_PROXIES")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        import_allow_private: env("STORE_IMPORT_ALLOW_PRIVATE").as_deref() == Some("1"),
        webhook: webhook(env)?,
        clamd: env("STORE_CLAMD")
            .filter(|v| !v.trim().is_empty())
            .map(|v| store_clamd::Clamd::parse(&v))
            .transpose()?,
        database_url: env("STORE_DATABASE_URL")
            .filter(|u| !u.trim().is_empty())
            .map(Secret),
        delete_grace_secs: env_number(
            env,
            "STORE_DELETE_GRACE_SECS",
            store_pg::DELETE_GRACE.as_secs(),
        )?,
        disk_cache_bytes: env_number(env, "STORE_DISK_CACHE_BYTES", DISK_CACHE_BYTES)?,
        s3: s3_settings(env)?,
    }))
}

/// Copies of large blobs of a bucket kept under `--data` by default: a
/// gigabyte holds 200 files of 5 MiB, and a disk has it to spare.
pub const DISK_CACHE_BYTES: u64 = 1 << 30;

/// The limits the settings change (CONTRACT.md's configuration table and
/// "self-hoster settings"), SPEC.md's elsewhere. `max_file_bytes` is the
/// flag's value, which wins over STORE_MAX_FILE_BYTES.
fn limits(
    max_file_bytes: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Limits, String> {
    let d = Limits::DEFAULT;
    let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let num = |name: &str, default: u64| env_number(env, name, default);
    let file_bytes_max = match max_file_bytes {
        Some(v) => number("--max-file-bytes", &v)?,
        None => num("STORE_MAX_FILE_BYTES", d.file_bytes_max)?,
    };
    let pics_upload_bytes_max = num("STORE_MAX_PICS_UPLOAD_BYTES", d.pics_upload_bytes_max)?;
    let pool_bytes = num("STORE_POOL_BYTES", d.pool_bytes)?;
    let rate = num("STORE_RATE_LIMIT_PER_MIN", d.rate_limit_per_min.into())?;
    let ttl = |name: &str, default: u64| {
        get(name).map_or(Ok(default), |v| {
            store_core::ttl::parse_ttl(v.trim())
                .map_err(|_| format!("{name} must be a lifetime like 4h or 14d, got {v:?}"))
        })
    };
    let limits = Limits {
        file_bytes_max,
        import_bytes_max: d.import_bytes_max.min(file_bytes_max),
        pics_upload_bytes_max,
        pics_import_bytes_max: d.pics_import_bytes_max.min(pics_upload_bytes_max),
        file_ttl_min_secs: ttl("STORE_TTL_MIN", d.file_ttl_min_secs)?,
        file_ttl_default_secs: ttl("STORE_TTL_DEFAULT", d.file_ttl_default_secs)?,
        file_ttl_max_secs: ttl("STORE_TTL_MAX", d.file_ttl_max_secs)?,
        pool_bytes,
        show_dir_bytes_max: num("STORE_SHOW_DIR_BYTES", pool_bytes / 10)?,
        pics_pool_bytes: num("STORE_PICS_POOL_BYTES", d.pics_pool_bytes)?,
        rate_limit_per_min: u32::try_from(rate)
            .map_err(|_| "STORE_RATE_LIMIT_PER_MIN is too large".to_string())?,
        upload_lease_secs: num("STORE_UPLOAD_LEASE_SECS", d.upload_lease_secs)?,
        ..d
    };
    check_limits(&limits)?;
    Ok(limits)
}

/// The longest lease a PATCH may be given, in seconds: past an hour, a
/// client whose process died waits longer than any client retries.
const UPLOAD_LEASE_SECS_MAX: u64 = 3600;

/// Refuses settings that cannot work together: an empty file limit, a
/// lease out of its range, or ttl bounds out of order.
fn check_limits(l: &Limits) -> Result<(), String> {
    if l.file_bytes_max == 0 || l.pics_upload_bytes_max == 0 {
        return Err("--max-file-bytes and STORE_MAX_PICS_UPLOAD_BYTES must be at least 1".into());
    }
    if !(1..=UPLOAD_LEASE_SECS_MAX).contains(&l.upload_lease_secs) {
        return Err(format!(
            "STORE_UPLOAD_LEASE_SECS must be 1 to {UPLOAD_LEASE_SECS_MAX}, got {}",
            l.upload_lease_secs
        ));
    }
    let (min, default, max) = (
        l.file_ttl_min_secs,
        l.file_ttl_default_secs,
        l.file_ttl_max_secs,
    );
    if !(min <= default && default <= max) {
        return Err(format!(
            "STORE_TTL_MIN ({min} s) <= STORE_TTL_DEFAULT ({default} s) <= STORE_TTL_MAX ({max} s) must hold"
        ));
    }
    Ok(())
}

/// STORE_PICS_UPLOADS: who may add images to a gallery.
fn gallery_uploads(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<store_core::gallery::GalleryUploads, String> {
    match env("STORE_PICS_UPLOADS").filter(|v| !v.trim().is_empty()) {
        None => Ok(store_core::gallery::GalleryUploads::Open),
        Some(v) => store_core::gallery::GalleryUploads::parse(&v)
            .ok_or_else(|| format!("STORE_PICS_UPLOADS: {v:?} is neither open nor admin")),
    }
}

/// The guards against greedy or hostile clients (docs/RELIABILITY.md),
/// from the environment over `ServerLimits::DEFAULT`; 0 turns a cap off,
/// never a time-out.
fn guards(env: &dyn Fn(&str) -> Option<String>) -> Result<ServerLimits, String> {
    let d = ServerLimits::DEFAULT;
    let env_num = |name: &str, default: u64| env_number(env, name, default);
    let secs = |name: &str, default: u64| -> Result<u64, String> {
        match env_num(name, default)? {
            0 => Err(format!("{name} must be at least 1")),
            n => Ok(n),
        }
    };
    Ok(ServerLimits {
        connections_per_client_max: env_num(
            "STORE_CONNECTIONS_PER_IP",
            d.connections_per_client_max,
        )?,
        requests_per_client_max: env_num("STORE_REQUESTS_PER_IP", d.requests_per_client_max)?,
        header_timeout_secs: secs("STORE_HEADER_TIMEOUT_SECS", d.header_timeout_secs)?,
        send_timeout_secs: secs("STORE_SEND_TIMEOUT_SECS", d.send_timeout_secs)?,
        body_timeout_secs: secs("STORE_BODY_TIMEOUT_SECS", d.body_timeout_secs)?,
        body_min_bytes_per_sec: env_num("STORE_BODY_MIN_BYTES_PER_SEC", d.body_min_bytes_per_sec)?
            .max(1),
        bodies_in_flight_bytes_max: env_num(
            "STORE_BODIES_IN_FLIGHT_BYTES",
            d.bodies_in_flight_bytes_max,
        )?,
        ..d
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn run(args: &[&str], env: &[(&str, &str)]) -> Result<Config, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&args, &|k| env.get(k).cloned())? {
            Command::Run(c) => Ok(*c),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn defaults() {
        let c = run(&[], &[]).unwrap();
        assert_eq!(c.listen, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(c.data, PathBuf::from("./data"));
        assert_eq!(c.base_url, None);
        assert_eq!(c.retain_tokens, "");
        assert_eq!(c.limits.rate_limit_per_min, 100);
        assert_eq!(c.limits.pool_bytes, 104_857_600);
        assert_eq!(c.limits.pics_pool_bytes, 21_474_836_480);
        assert!(!c.import_allow_private);
        assert_eq!(c.limits.show_dir_bytes_max, 10_485_760);
        assert_eq!(c.limits, Limits::DEFAULT, "SPEC.md's numbers");
        assert_eq!(c.limits.server.connections_per_client_max, 64);
        assert_eq!(c.limits.server.send_timeout_secs, 30);
        assert_eq!(c.limits.server.bodies_in_flight_bytes_max, 1 << 30);
    }

    #[test]
    fn guards_from_the_environment() {
        let c = run(
            &[],
            &[
                ("STORE_CONNECTIONS_PER_IP", "0"),
                ("STORE_SEND_TIMEOUT_SECS", "2"),
                ("STORE_BODY_MIN_BYTES_PER_SEC", "100"),
            ],
        )
        .unwrap();
        assert_eq!(c.limits.server.connections_per_client_max, 0);
        assert_eq!(c.limits.server.send_timeout_secs, 2);
        assert_eq!(c.limits.server.body_min_bytes_per_sec, 100);
        assert!(run(&[], &[("STORE_SEND_TIMEOUT_SECS", "0")]).is_err());
        assert!(run(&[], &[("STORE_REQUESTS_PER_IP", "many")]).is_err());
    }

    #[test]
    fn flags_win_over_env() {
        let env = [
            ("STORE_LISTEN", "0.0.0.0:1"),
            ("STORE_DATA", "/env"),
            ("STORE_BASE_URL", "http://env"),
        ];
        let c = run(
            &[
                "--listen",
                "127.0.0.1:0",
                "--data=/flag",
                "--base-url",
                "https://x.test/",
            ],
            &env,
        )
        .unwrap();
        assert_eq!(c.listen, "127.0.0.1:0".parse().unwrap());
        assert_eq!(c.data, PathBuf::from("/flag"));
        assert_eq!(c.base_url.as_deref(), Some("https://x.test"));
        let c = run(&[], &env).unwrap();
        assert_eq!(c.listen, "0.0.0.0:1".parse().unwrap());
        assert_eq!(c.data, PathBuf::from("/env"));
    }

    #[test]
    fn env_values() {
        let c = run(
            &[],
            &[
                ("STORE_RETAIN_TOKEN", "a,b"),
                ("STORE_RATE_LIMIT_PER_MIN", "0"),
                ("STORE_POOL_BYTES", "1000"),
                ("STORE_TRUSTED_PROXIES", "10.0.0.1, 192.168.0.0/16"),
                ("STORE_IMPORT_ALLOW_PRIVATE", "1"),
            ],
        )
        .unwrap();
        assert_eq!(c.retain_tokens, "a,b");
        assert_eq!(c.limits.rate_limit_per_min, 0);
        assert_eq!(c.limits.pool_bytes, 1000);
        assert_eq!(c.limits.show_dir_bytes_max, 100, "a tenth of the pool");
        assert_eq!(c.trusted_proxies, ["10.0.0.1", "192.168.0.0/16"]);
        assert!(c.import_allow_private);
    }

    #[test]
    fn self_hoster_settings_set_the_limits() {
        let env = [
            ("STORE_MAX_FILE_BYTES", "1000000"),
            ("STORE_MAX_PICS_UPLOAD_BYTES", "2000"),
            ("STORE_TTL_MIN", "1h"),
            ("STORE_TTL_DEFAULT", "2"),
            ("STORE_TTL_MAX", "30d"),
        ];
        let l = run(&[], &env).unwrap().limits;
        assert_eq!(l.file_bytes_max, 1_000_000);
        assert_eq!(l.import_bytes_max, 1_000_000, "never over the file limit");
        assert_eq!(l.pics_upload_bytes_max, 2000);
        assert_eq!(l.pics_import_bytes_max, 2000);
        assert_eq!(
            (
                l.file_ttl_min_secs,
                l.file_ttl_default_secs,
                l.file_ttl_max_secs
            ),
            (3_600, 7_200, 30 * 86_400)
        );
        let l = run(&["--max-file-bytes=9"], &env).unwrap().limits;
        assert_eq!(l.file_bytes_max, 9, "the flag wins");
        let big = run(&["--max-file-bytes", "50000000"], &[]).unwrap().limits;
        assert_eq!(big.import_bytes_max, Limits::DEFAULT.import_bytes_max);
    }

    #[test]
    fn limits_that_cannot_work_together_are_refused() {
        for env in [
            [("STORE_MAX_FILE_BYTES", "0")],
            [("STORE_MAX_PICS_UPLOAD_BYTES", "0")],
            [("STORE_TTL_MAX", "1h")],
            [("STORE_TTL_MIN", "1d")],
            [("STORE_TTL_DEFAULT", "soon")],
            [("STORE_TTL_MIN", "0h")],
        ] {
            assert!(run(&[], &env).is_err(), "{env:?}");
        }
        assert!(run(&["--max-file-bytes", "lots"], &[]).is_err());
    }

    #[test]
    fn gallery_uploads_are_open_unless_closed_to_admins() {
        use store_core::gallery::GalleryUploads;
        let get = |v: &str| run(&[], &[("STORE_PICS_UPLOADS", v)]).map(|c| c.gallery_uploads);
        assert_eq!(run(&[], &[]).unwrap().gallery_uploads, GalleryUploads::Open);
        assert_eq!(get("admin"), Ok(GalleryUploads::Admin));
        assert_eq!(get(" open "), Ok(GalleryUploads::Open));
        assert_eq!(get(""), Ok(GalleryUploads::Open), "blank is unset");
        assert!(get("closed").is_err());
    }

    #[test]
    fn the_metrics_listener_is_off_unless_asked_for() {
        assert_eq!(run(&[], &[]).unwrap().metrics_listen, None);
        let addr = "127.0.0.1:9090".parse().unwrap();
        let env = [("STORE_METRICS_LISTEN", "127.0.0.1:9090")];
        assert_eq!(run(&[], &env).unwrap().metrics_listen, Some(addr));
        let flag = run(&["--metrics-listen=127.0.0.1:9191"], &env).unwrap();
        assert_eq!(
            flag.metrics_listen,
            Some("127.0.0.1:9191".parse().unwrap()),
            "the flag wins"
        );
        assert!(run(&["--metrics-listen", "nope"], &[]).is_err());
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(run(&["--listen", "nope"], &[]).is_err());
        assert!(run(&["--listen"], &[]).is_err());
        assert!(run(&["--bogus"], &[]).is_err());
        assert!(run(&["--base-url", "ftp://x"], &[]).is_err());
        assert!(run(&[], &[("STORE_POOL_BYTES", "-1")]).is_err());
    }

    #[test]
    fn migrate_takes_its_source_and_needs_a_database() {
        let parse_with = |args: &[&str], env: &[(&str, &str)]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let env: HashMap<String, String> = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            parse(&args, &|k| env.get(k).cloned())
        };
        let db = [("STORE_DATABASE_URL", "postgres://u:p@127.0.0.1:1/db")];
        match parse_with(&["migrate", "--from-data", "old", "--data=new"], &db).unwrap() {
            Command::Migrate { config, from_data } => {
                assert_eq!(from_data, PathBuf::from("old"));
                assert_eq!(config.data, PathBuf::from("new"));
            }
            other => panic!("{other:?}"),
        }
        let no_source = parse_with(&["migrate"], &db).unwrap_err();
        assert!(no_source.contains("--from-data"), "{no_source}");
        let no_db = parse_with(&["migrate", "--from-data", "old"], &[]).unwrap_err();
        assert!(no_db.contains("STORE_DATABASE_URL"), "{no_db}");
        assert!(
            run(&["--from-data", "old"], &db).is_err(),
            "--from-data belongs to migrate"
        );
    }

    #[test]
    fn s3_settings_come_whole_or_not_at_all_and_hide_the_secret() {
        assert_eq!(run(&[], &[]).unwrap().s3, None, "local files by default");
        let full = [
            ("STORE_S3_ENDPOINT", "http://127.0.0.1:3900"),
            ("STORE_S3_BUCKET", "b"),
            ("STORE_S3_ACCESS_KEY_ID", "GKid"),
            ("STORE_S3_SECRET_ACCESS_KEY", "s3cr3t-value"),
        ];
        let c = run(&[], &full).unwrap();
        let s3 = c.s3.as_ref().unwrap();
        assert_eq!(s3.region, "us-east-1", "the contract's default region");
        assert_eq!(s3.prefix, "");
        assert!(!format!("{c:?}").contains("s3cr3t-value"), "{c:?}");
        let mut with_prefix = full.to_vec();
        with_prefix.push(("STORE_S3_PREFIX", "svc-a/"));
        with_prefix.push(("STORE_S3_REGION", "garage"));
        let s3 = run(&[], &with_prefix).unwrap().s3.unwrap();
        assert_eq!(
            (s3.prefix.as_str(), s3.region.as_str()),
            ("svc-a/", "garage")
        );
        for missing in 1..full.len() {
            let mut partial = full.to_vec();
            let (name, _) = partial.remove(missing);
            let e = run(&[], &partial).unwrap_err();
            assert!(e.contains(name), "{e}");
            assert!(!e.contains("s3cr3t-value"), "{e}");
        }
        let e = run(&[], &full[1..]).unwrap_err();
        assert!(e.contains("STORE_S3_ENDPOINT"), "{e}");
    }
}
