//! Request bodies: the Content-Length rule, streaming into an upload in
//! batches written on the blocking pool (the limit enforced as they are
//! written), and multipart parts.

use bytes::Bytes;
use http_body_util::BodyExt;
use std::sync::Arc;
use std::time::Duration;

use store_app::{App, AppError, AppResult, Part, Staged, Upload};
use store_core::StoreError;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::lanes::Lane;

/// The error a request body may fail with: any, boxed, so that a host's
/// own body type (hyper's `Incoming`, axum's `Body`) fits.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body as the handlers read it. [`crate::StoreService`] boxes
/// whatever body its host hands it into this once per request, so one set
/// of handlers serves the built-in listener and any embedding server.
pub type RequestBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;

pub use store_wire::body_head::{declared_length, declares_body, multipart_boundary};

fn body_error(e: BoxError) -> AppError {
    StoreError::bad_request(format!("the request body could not be read: {e}")).into()
}

/// Where a request's body goes and how fast it must come: its bytes are
/// written on `lane`, each step must arrive within `idle`, and the whole
/// body by `deadline` (a minimum transfer rate, so that a client trickling
/// a byte now and then cannot hold a request open for ever). It also holds
/// the body's room among the bodies in flight, given back when dropped.
pub struct Intake {
    app: Arc<App>,
    lane: Lane,
    idle: Duration,
    deadline: Instant,
    _room: Option<OwnedSemaphorePermit>,
}

impl std::fmt::Debug for Intake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intake")
            .field("idle", &self.idle)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Intake {
    pub fn new(
        app: Arc<App>,
        lane: Lane,
        idle: Duration,
        deadline: Instant,
        room: Option<OwnedSemaphorePermit>,
    ) -> Self {
        Self {
            app,
            lane,
            idle,
            deadline,
            _room: room,
        }
    }

    /// An intake with a lane of its own and an hour to read, for callers
    /// outside a server (fuzzing, tests).
    pub fn unhurried(app: Arc<App>) -> Self {
        let hour = Duration::from_secs(3600);
        Self::new(app, Lane::new(8), hour, Instant::now() + hour, None)
    }

    fn stalled(&self, overall: bool) -> AppError {
        let why = if overall {
            "the request body arrived too slowly: it must come within its deadline (a grace period plus its length at the minimum rate)".to_string()
        } else {
            format!(
                "the request body stalled: nothing arrived for {} s",
                self.idle.as_secs_f32()
            )
        };
        StoreError::bad_request(why).into()
    }

    /// Awaits one step of a body, bounded by the idle time and the
    /// deadline of the whole body.
    async fn step<T>(&self, f: impl std::future::Future<Output = T>) -> AppResult<T> {
        let idle_until = Instant::now() + self.idle;
        let overall = self.deadline <= idle_until;
        tokio::time::timeout_at(idle_until.min(self.deadline), f)
            .await
            .map_err(|_| self.stalled(overall))
    }
}

/// Bytes gathered from a body before they are written out in one go.
const SINK_BATCH_BYTES: usize = 256 * 1024;

/// An upload fed from the executor. Chunks are gathered up to
/// [`SINK_BATCH_BYTES`] and written by one job on the blocking pool, so
/// disk writes never stall the executor and a thread is held only while
/// bytes are being written, not while a slow client is sending them.
///
/// (`block_in_place` per chunk, the earlier way, handed the executor over
/// to a fresh thread on every chunk: under steady uploads hundreds of
/// threads piled up in the pool, each with its own stack and allocator
/// arena, and memory grew with them; docs/PERFORMANCE.md, scenario 4.)
///
/// Dropped before [`Sink::finish`] (a failed or abandoned request), the
/// upload is dropped uncommitted and leaves nothing behind. A resumable
/// upload's PATCH streams through the same sink ([`stream_patch`]).
struct Sink<W> {
    lane: Lane,
    upload: Option<W>,
    pending: Vec<Bytes>,
    pending_bytes: usize,
}

/// What a sink writes its chunks into, on the lane: a plain upload's new
/// blob, or a resumable upload's PATCH.
trait Chunks: Send + 'static {
    fn push(&mut self, chunk: &[u8]) -> AppResult<()>;
}

impl Chunks for Upload {
    fn push(&mut self, chunk: &[u8]) -> AppResult<()> {
        Upload::push(self, chunk)
    }
}

impl Chunks for store_app::Patch {
    fn push(&mut self, chunk: &[u8]) -> AppResult<()> {
        store_app::Patch::push(self, chunk)
    }
}

impl Sink<Upload> {
    fn new(intake: &Intake, limit_bytes: u64) -> AppResult<Self> {
        Ok(Self::with_writer(
            intake,
            intake.app.begin_upload(limit_bytes)?,
        ))
    }
}

impl<W: Chunks> Sink<W> {
    fn with_writer(intake: &Intake, writer: W) -> Self {
        Self {
            lane: intake.lane.clone(),
            upload: Some(writer),
            pending: Vec::new(),
            pending_bytes: 0,
        }
    }

    async fn push(&mut self, chunk: Bytes) -> AppResult<()> {
        self.pending_bytes += chunk.len();
        self.pending.push(chunk);
        if self.pending_bytes >= SINK_BATCH_BYTES {
            self.write_pending().await?;
        }
        Ok(())
    }

    async fn write_pending(&mut self) -> AppResult<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunks = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let Some(mut upload) = self.upload.take() else {
            return Err(AppError::Storage(store_core::StorageError::new(
                "an upload was written after a failed write",
            )));
        };
        let (upload, written) = self
            .lane
            .run(move || {
                let written = chunks.iter().try_for_each(|c| upload.push(c));
                (upload, written)
            })
            .await?;
        self.upload = Some(upload);
        written
    }
}

impl Sink<Upload> {
    /// Writes what is left, then commits (fsync, rename, directory fsync)
    /// on the blocking pool. Not `block_in_place`: an fsync can take
    /// milliseconds, and handing the executor over that long stalls every
    /// other connection on a one-core server (docs/PERFORMANCE.md,
    /// scenario 5).
    async fn finish(mut self) -> AppResult<Staged> {
        self.write_pending().await?;
        let Some(upload) = self.upload.take() else {
            return Err(AppError::Storage(store_core::StorageError::new(
                "an upload was finished after a failed write",
            )));
        };
        self.lane.run(move || upload.finish()).await?
    }
}

/// Streams a raw body into a new blob of at most `limit_bytes`.
pub async fn receive(
    intake: &Intake,
    mut body: RequestBody,
    limit_bytes: u64,
) -> AppResult<Staged> {
    let mut sink = Sink::new(intake, limit_bytes)?;
    while let Some(frame) = intake.step(body.frame()).await? {
        let frame = frame.map_err(body_error)?;
        if let Ok(data) = frame.into_data() {
            if let Err(e) = sink.push(data).await {
                drop(sink);
                return Err(drained(intake, body, e).await);
            }
        }
    }
    sink.finish().await
}

/// Streams a resumable upload's PATCH body into `patch`, through a
/// sink, as [`receive`] does. It answers the patch back (holding every
/// byte it took) with how the body ended: whole, cut short by the client
/// (the bytes that came are still the patch's to keep), or refused by a
/// write, which says more than a cut. `None` only if a job on the lane
/// died with it.
pub async fn stream_patch(
    intake: &Intake,
    mut body: RequestBody,
    patch: store_app::Patch,
) -> (Option<store_app::Patch>, AppResult<()>) {
    let mut sink = Sink::with_writer(intake, patch);
    let ended = loop {
        match intake.step(body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    if let Err(e) = sink.push(data).await {
                        return (sink.upload, Err(e));
                    }
                }
            }
            Ok(None) => break Ok(()),
            Ok(Some(Err(e))) => break Err(body_error(e)),
            Err(e) => break Err(e),
        }
    };
    let written = sink.write_pending().await;
    (sink.upload, written.and(ended))
}

/// What is left to throw away of a body after a storage fault in the
/// middle of it (a full disk). Reading the rest, up to the server's
/// `drain_bytes_max` and within the body's deadlines, lets a client
/// still sending read the 507 instead of a broken pipe. A refusal of the
/// client's own making (too large, a bad part) does not wait for its
/// bytes.
struct Drain {
    left: usize,
}

impl Drain {
    /// A budget for `e`'s body, or `None` if `e` is not a storage fault.
    fn after(e: &AppError, intake: &Intake) -> Option<Self> {
        let max = intake.app.config().limits.server.drain_bytes_max;
        matches!(e, AppError::Storage(_)).then_some(Self {
            left: usize::try_from(max).unwrap_or(usize::MAX),
        })
    }

    /// Counts `n` bytes thrown away; false once the budget is spent.
    fn take(&mut self, n: usize) -> bool {
        self.left = self.left.saturating_sub(n);
        self.left > 0
    }
}

/// Throws away the rest of a raw body after `e` (see [`Drain`]).
async fn drained(intake: &Intake, mut body: RequestBody, e: AppError) -> AppError {
    let Some(mut drain) = Drain::after(&e, intake) else {
        return e;
    };
    while let Ok(Some(Ok(frame))) = intake.step(body.frame()).await {
        if !drain.take(frame.data_ref().map_or(0, Bytes::len)) {
            break;
        }
    }
    e
}

/// Reads a whole body of at most `limit_bytes` (already checked against
/// Content-Length) into memory. For small bounded bodies only (PATCH text).
pub async fn read_bounded(
    intake: &Intake,
    mut body: RequestBody,
    limit_bytes: u64,
) -> AppResult<Bytes> {
    let mut buf = Vec::new();
    while let Some(frame) = intake.step(body.frame()).await? {
        let frame = frame.map_err(body_error)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() as u64 + data.len() as u64 > limit_bytes {
                return Err(StoreError::too_large(limit_bytes).into());
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.into())
}

/// What a multipart body held: file parts, and the plain form fields that
/// came with them (a browser form sends `ttl`, `once`... this way).
#[derive(Debug, Default)]
pub struct Multipart {
    pub files: Vec<Part>,
    pub fields: Vec<(String, String)>,
}

/// A check run once, with the form fields read so far, before the first
/// file part is written: a refusal that needs a form field (a write token
/// typed into a page) still comes before any upload is stored.
pub type Gate<'a> = Box<
    dyn FnOnce(
            Vec<(String, String)>,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = AppResult<()>> + Send + 'a>>
        + Send
        + 'a,
>;

/// What a multipart body may hold.
pub struct PartRules<'a> {
    /// Bytes of one file part.
    pub file_limit_bytes: u64,
    /// File parts in the body.
    pub files_max: usize,
    /// When file parts name files (a bundle's, a dir's), the limits their
    /// names are checked against: every name is checked as its part
    /// arrives, before its bytes are written, from the second file part on
    /// (a single file may still be named by `name=`, so its part's name is
    /// checked only once a second arrives).
    pub names_checked: Option<&'a store_core::Limits>,
    pub gate: Option<Gate<'a>>,
    /// Bytes of one plain field.
    pub field_bytes_max: usize,
    /// Plain fields in the body.
    pub fields_max: usize,
    /// Bytes of one part's header block.
    pub part_header_bytes_max: usize,
}

impl std::fmt::Debug for PartRules<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartRules")
            .field("file_limit_bytes", &self.file_limit_bytes)
            .field("files_max", &self.files_max)
            .field("names_checked", &self.names_checked)
            .finish_non_exhaustive()
    }
}

impl PartRules<'_> {
    /// Parts of `file_limit_bytes` each, at most `files_max`, fields and
    /// part headers within the server's limits, names not checked, no
    /// gate.
    pub fn new(file_limit_bytes: u64, files_max: usize, server: &store_core::ServerLimits) -> Self {
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Self {
            file_limit_bytes,
            files_max,
            names_checked: None,
            gate: None,
            field_bytes_max: size(server.form_field_bytes_max),
            fields_max: size(server.form_fields_max),
            part_header_bytes_max: size(server.part_header_bytes_max),
        }
    }

    /// Checks what can be checked of the next file part, named `name`,
    /// before its bytes are read.
    async fn admit(&mut self, out: &Multipart, name: Option<&str>) -> AppResult<()> {
        if out.files.len() >= self.files_max {
            let max = self.files_max;
            return Err(StoreError::bad_request(format!(
                "too many files: at most {max} per request"
            ))
            .into());
        }
        if let Some(gate) = self.gate.take() {
            gate(out.fields.clone()).await?;
        }
        if let Some(limits) = self.names_checked.filter(|_| !out.files.is_empty()) {
            let first = out.files.first().and_then(|p| p.name.as_deref());
            for n in [first, name].into_iter().flatten() {
                store_core::names::validate_file_name(limits, n)?;
            }
        }
        Ok(())
    }
}

fn multipart_error(e: multer::Error) -> AppError {
    store_wire::body_head::multipart_refusal(&e).into()
}

/// Reads a multipart body. Each file part streams into its own blob and is
/// committed before the next part starts, so one request holds one open
/// file however many parts it has. `rules` bound the parts and say what is
/// checked before each file part is written.
pub async fn read_multipart<S, E>(
    intake: &Intake,
    body: S,
    boundary: String,
    mut rules: PartRules<'_>,
) -> AppResult<Multipart>
where
    S: futures_core::Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    let guarded = crate::partguard::Guarded::new(body, &boundary, rules.part_header_bytes_max);
    let mut mp = multer::Multipart::new(guarded, boundary);
    let mut out = Multipart::default();
    while let Some(mut field) = intake
        .step(mp.next_field())
        .await?
        .map_err(multipart_error)?
    {
        let Some(file_name) =
            store_wire::body_head::part_file_name(field.headers(), field.file_name())?
        else {
            let pair = read_form_field(intake, &mut field, rules.field_bytes_max).await?;
            if out.fields.len() >= rules.fields_max {
                return Err(StoreError::bad_request("too many form fields").into());
            }
            out.fields.push(pair);
            continue;
        };
        let name = Some(file_name).filter(|n| !n.is_empty());
        rules.admit(&out, name.as_deref()).await?;
        let content_type = field.content_type().map(|m| m.essence_str().to_string());
        let body = match read_part(intake, &mut field, rules.file_limit_bytes).await {
            Ok(staged) => staged,
            Err(e) => return Err(drained_parts(intake, field, &mut mp, e).await),
        };
        out.files.push(Part {
            name,
            declared_type: content_type,
            body,
        });
    }
    Ok(out)
}

/// Streams one file part into a new blob.
async fn read_part(
    intake: &Intake,
    field: &mut multer::Field<'_>,
    limit_bytes: u64,
) -> AppResult<Staged> {
    let mut sink = Sink::new(intake, limit_bytes)?;
    while let Some(chunk) = intake.step(field.chunk()).await?.map_err(multipart_error)? {
        sink.push(chunk).await?;
    }
    sink.finish().await
}

/// Throws away the rest of a multipart body after `e`: what is left of
/// `field`, then every later part (see [`Drain`]).
async fn drained_parts<'r>(
    intake: &Intake,
    field: multer::Field<'r>,
    mp: &mut multer::Multipart<'r>,
    e: AppError,
) -> AppError {
    let Some(mut drain) = Drain::after(&e, intake) else {
        return e;
    };
    let mut next = Some(field);
    while let Some(mut field) = next.take() {
        while let Ok(Ok(Some(chunk))) = intake.step(field.chunk()).await {
            if !drain.take(chunk.len()) {
                return e;
            }
        }
        // multer hands out the next part only once this one is gone.
        drop(field);
        next = match intake.step(mp.next_field()).await {
            Ok(Ok(part)) => part,
            _ => None,
        };
    }
    e
}

/// A plain form field, kept small.
async fn read_form_field(
    intake: &Intake,
    field: &mut multer::Field<'_>,
    bytes_max: usize,
) -> AppResult<(String, String)> {
    let name = field.name().unwrap_or("").to_string();
    let mut value = Vec::new();
    while let Some(chunk) = intake.step(field.chunk()).await?.map_err(multipart_error)? {
        value.extend_from_slice(&chunk);
        if value.len() > bytes_max {
            return Err(StoreError::bad_request(format!("form field {name:?} is too long")).into());
        }
    }
    let value = String::from_utf8(value)
        .map_err(|_| StoreError::bad_request(format!("form field {name:?} is not UTF-8")))?;
    Ok((name, value))
}
