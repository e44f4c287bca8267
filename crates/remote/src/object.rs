//! One remote object read by ranges ([`RemoteObject`], the core's
//! `RangeSource`), a range of it streamed in bounded parts
//! ([`PartReader`]), and the place it lies ([`RemotePlace`], the core's
//! `RangeDir`), listed by the service or, over HTTP, through WebDAV
//! ([`list`]).
//!
//! The object's version is pinned by its first request (`HEAD`: length,
//! ETag, version id); every later request carries it (`If-Match`, and the
//! version id where the service has one) and every answer is checked
//! against it, so an object replaced mid-read is an error, never a label
//! of two objects. A range's chunks reach the hasher as they arrive, no
//! copy; a body shorter than asked is asked for again from its first byte
//! not yet handed on, then refused: every byte is handed on once, in
//! order, and a part that cannot be completed fails the job
//! (docs/adr/0044, "Speed"). A read at a position is whole or an error.

use std::ffi::{OsStr, OsString};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};
use tokio::runtime::Runtime;
use tokio::sync::{Semaphore, mpsc};

use gguf_digest_core::source::{Beside, RangeDir, RangeReader, RangeSource, ReadMode, Source, changed};
use gguf_digest_core::{Error, Result};

use crate::redact::{error, io_error};

pub(crate) mod list;

/// The most objects a prefix listed as a directory may hold: a listing
/// that never ends is refused, not held.
pub(crate) const MAX_LISTED: usize = 1_000_000;

/// One bucket, container or host: its client, and what every object
/// read through it shares (the runtime, the limit on requests in flight).
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) runtime: Arc<Runtime>,
    /// One permit per request in flight, across every object.
    pub(crate) connections: Arc<Semaphore>,
    /// How URLs of this store are shown: `scheme://authority/`.
    pub(crate) shown: String,
    /// Bytes per range request of a job's range.
    pub(crate) part: u64,
    /// Short bodies retried before one is refused.
    pub(crate) retries: usize,
    /// For an HTTP(S) host: how a prefix is listed (WebDAV; `object_store`
    /// lists the other services).
    pub(crate) dav: Option<list::Dav>,
}

impl Store {
    fn shown_key(&self, key: &str) -> PathBuf {
        PathBuf::from(format!("{}{}", self.shown, key))
    }

    /// Pins the object `key`: its length, ETag and version, by `HEAD`.
    pub(crate) fn head(self: &Arc<Self>, key: &str) -> Result<RemoteObject> {
        let shown = self.shown_key(key);
        let location = Key::parse(key).map_err(|e| io_error(&e.to_string(), &shown, None))?;
        let meta = self.runtime.block_on(async {
            let _permit = self.connections.acquire().await;
            self.store.head(&location).await
        });
        let meta = meta.map_err(|e| error(&e, &shown, None))?;
        Ok(RemoteObject { store: Arc::clone(self), key: location, shown, meta })
    }

    /// The place `prefix` (empty, or ending in `/`) of this store.
    pub(crate) fn place(self: &Arc<Self>, prefix: &str) -> RemotePlace {
        RemotePlace { store: Arc::clone(self), prefix: prefix.to_string(), shown: self.shown_key(prefix) }
    }
}

/// One object, its version pinned.
#[derive(Debug)]
pub(crate) struct RemoteObject {
    store: Arc<Store>,
    key: Key,
    shown: PathBuf,
    meta: ObjectMeta,
}

impl RemoteObject {
    /// The object as a source every format reads.
    pub(crate) fn into_source(self) -> Source {
        let shown = self.shown.clone();
        Source::from_range(&shown, Arc::new(self))
    }

    fn options(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: self.meta.e_tag.clone(),
            version: self.meta.version.clone(),
            ..GetOptions::default()
        }
    }

    /// The bytes of `range` (not empty) of the pinned version, all of
    /// them: a short body is asked for again, then refused.
    async fn fetch(
        store: &Store,
        key: &Key,
        meta: &ObjectMeta,
        options: GetOptions,
        range: Range<u64>,
        shown: &Path,
    ) -> Result<Bytes> {
        let want = range.end.saturating_sub(range.start);
        let mut tries = 0usize;
        loop {
            let got = {
                let _permit = store.connections.acquire().await;
                match store.store.get_opts(key, options.clone()).await {
                    Ok(r) => {
                        if r.meta.e_tag.is_some() && meta.e_tag.is_some() && r.meta.e_tag != meta.e_tag {
                            return Err(changed("it was replaced while it was read (its ETag changed)")
                                .at(range.start)
                                .in_file(shown));
                        }
                        r.bytes().await
                    }
                    Err(e) => Err(e),
                }
            };
            let bytes = got.map_err(|e| match e {
                // It was there when pinned: its pinned version gone is the
                // object replaced (GCS answers 404 for a generation
                // overwritten without versioning), not "no such object".
                object_store::Error::NotFound { .. } => {
                    changed("it was replaced while it was read (the version pinned at its first request is gone)")
                        .at(range.start)
                        .in_file(shown)
                }
                e => error(&e, shown, Some(range.start)),
            })?;
            if bytes.len() as u64 == want {
                return Ok(bytes);
            }
            tries = tries.saturating_add(1);
            if tries > store.retries {
                let what = format!("the server sent {} of the {want} bytes asked for, {tries} times", bytes.len());
                return Err(io_error(&what, shown, Some(range.start)));
            }
        }
    }
}

impl RemoteObject {
    /// A request for `range` (not empty) of the pinned version: its body,
    /// streamed as it arrives, holding one permit until it is dropped.
    async fn open_part(store: &Store, key: &Key, meta: &ObjectMeta, shown: &Path, range: Range<u64>) -> Result<Body> {
        let permit = Arc::clone(&store.connections)
            .acquire_owned()
            .await
            .map_err(|_| Error::internal("the connection permits were closed").in_file(shown))?;
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: meta.e_tag.clone(),
            version: meta.version.clone(),
            ..GetOptions::default()
        };
        match store.store.get_opts(key, options).await {
            Ok(r) => {
                if r.meta.e_tag.is_some() && meta.e_tag.is_some() && r.meta.e_tag != meta.e_tag {
                    return Err(changed("it was replaced while it was read (its ETag changed)")
                        .at(range.start)
                        .in_file(shown));
                }
                Ok(Body { chunks: r.into_stream(), _permit: permit })
            }
            Err(e) => Err(part_error(&e, shown, range.start)),
        }
    }
}

/// `object_store`'s error about a part at `at` of an object pinned when
/// opened: its pinned version gone is the object replaced (GCS answers 404
/// for a generation overwritten without versioning), not "no such object".
fn part_error(e: &object_store::Error, shown: &Path, at: u64) -> Error {
    match e {
        object_store::Error::NotFound { .. } => {
            changed("it was replaced while it was read (the version pinned at its first request is gone)")
                .at(at)
                .in_file(shown)
        }
        e => error(e, shown, Some(at)),
    }
}

/// Chunks (as the HTTP stack received them, up to a few hundred KiB
/// each) queued between a range's requests and its hashing thread.
const CHUNKS_AHEAD: usize = 16;

/// A part's request sent ahead, stopped if its range's reading stops.
struct Ahead(tokio::task::JoinHandle<Result<Body>>);

impl Drop for Ahead {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One answer's body, and the permit its request holds.
pub(crate) struct Body {
    chunks: futures::stream::BoxStream<'static, object_store::Result<Bytes>>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

/// Sends every byte of `range` on `tx`, in order, chunk by chunk as they
/// arrive, starting with the answer `first`: all of them, or an error.
///
/// A body that ends early is asked for again from its first byte not yet
/// sent (`open`, the same pinned version), at most `retries` times, then
/// refused: nothing sent is sent twice, so what the hasher has taken never
/// needs undoing, and a part that fails after some of it was sent fails
/// the whole job (docs/adr/0044, "Speed"). A body longer than asked is
/// refused. `Err(None)`: the reader is gone.
async fn send_part<F, O>(
    first: Result<Body>,
    range: Range<u64>,
    retries: usize,
    open: &O,
    shown: &Path,
    tx: &mpsc::Sender<Result<Bytes>>,
) -> std::result::Result<(), Option<Error>>
where
    O: Fn(Range<u64>) -> F,
    F: std::future::Future<Output = Result<Body>>,
{
    let mut at = range.start;
    let mut body = first?;
    let mut tries = 0usize;
    loop {
        while let Some(chunk) = body.chunks.next().await {
            let chunk = chunk.map_err(|e| part_error(&e, shown, at))?;
            let n = chunk.len() as u64;
            if n > range.end.saturating_sub(at) {
                let what =
                    format!("the server sent more than the {} bytes asked for", range.end.saturating_sub(range.start));
                return Err(Some(io_error(&what, shown, Some(range.start))));
            }
            if n == 0 {
                continue;
            }
            at = at.saturating_add(n);
            tx.send(Ok(chunk)).await.map_err(|_| None)?;
        }
        if at == range.end {
            return Ok(());
        }
        tries = tries.saturating_add(1);
        if tries > retries {
            let what = format!(
                "the server's answers ended {} bytes short of the {} asked for, {tries} times",
                range.end.saturating_sub(at),
                range.end.saturating_sub(range.start)
            );
            return Err(Some(io_error(&what, shown, Some(at))));
        }
        drop(body);
        body = open(at..range.end).await?;
    }
}

impl RangeSource for RemoteObject {
    fn len(&self) -> u64 {
        self.meta.size
    }

    fn version(&self) -> Option<&str> {
        self.meta.version.as_deref().or(self.meta.e_tag.as_deref())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.meta.size)
            .ok_or_else(|| changed("it ended early").at(offset).in_file(&self.shown))?;
        let range = offset..end;
        let bytes = self.store.runtime.block_on(RemoteObject::fetch(
            &self.store,
            &self.key,
            &self.meta,
            self.options(range.clone()),
            range,
            &self.shown,
        ))?;
        buf.copy_from_slice(&bytes);
        Ok(())
    }

    fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>> {
        let end = start
            .checked_add(len)
            .filter(|&e| e <= self.meta.size)
            .ok_or_else(|| changed("it ended early").at(start).in_file(&self.shown))?;
        let part = self.store.part.max(1);
        let mut parts = Vec::new();
        let mut at = start;
        while at < end {
            let to = at.saturating_add(part).min(end);
            parts.push(at..to);
            at = to;
        }
        let (tx, rx) = mpsc::channel::<Result<Bytes>>(CHUNKS_AHEAD);
        let (store, key, meta, shown) =
            (Arc::clone(&self.store), self.key.clone(), self.meta.clone(), self.shown.clone());
        let task = self.store.runtime.spawn(async move {
            let open = |range: Range<u64>| RemoteObject::open_part(&store, &key, &meta, &shown, range);
            // The next part's request goes out (a task of its own, so it
            // progresses) while this one's body is hashed, its first bytes
            // waiting in the socket: a part never starts with a round
            // trip. The shared permits bound the total.
            let ahead = |range: Range<u64>| {
                let (store, key, meta, shown) = (Arc::clone(&store), key.clone(), meta.clone(), shown.clone());
                let request =
                    tokio::spawn(async move { RemoteObject::open_part(&store, &key, &meta, &shown, range).await });
                Ahead(request)
            };
            let mut parts = parts.into_iter();
            let mut next = parts.next().map(|r| (ahead(r.clone()), r));
            while let Some((mut request, range)) = next.take() {
                let first = (&mut request.0)
                    .await
                    .unwrap_or_else(|_| Err(Error::internal("a part's request stopped").in_file(&shown)));
                next = parts.next().map(|r| (ahead(r.clone()), r));
                let sent = send_part(first, range, store.retries, &open, &shown, &tx).await;
                if let Err(e) = sent {
                    // The reader gone (it stopped early) or the part failed.
                    if let Some(e) = e {
                        let _ = tx.send(Err(e)).await;
                    }
                    return;
                }
            }
        });
        Ok(Box::new(PartReader { rx, held: Bytes::new(), task, shown: &self.shown }))
    }

    fn check_unchanged(&self) -> Result<()> {
        let now = self.store.runtime.block_on(async {
            let _permit = self.store.connections.acquire().await;
            self.store.store.head(&self.key).await
        });
        let now = now.map_err(|e| error(&e, &self.shown, None))?;
        if now.size != self.meta.size || now.e_tag != self.meta.e_tag || now.version != self.meta.version {
            return Err(
                changed("it was replaced while it was read (its size, ETag or version changed)").in_file(&self.shown)
            );
        }
        Ok(())
    }

    fn beside(&self) -> Result<Arc<dyn RangeDir>> {
        let key = self.key.as_ref();
        let prefix = match key.rfind('/') {
            Some(i) => key.get(..=i).unwrap_or(""),
            None => "",
        };
        Ok(Arc::new(self.store.place(prefix)))
    }
}

/// A job's range arriving in parts, chunk by chunk, handed to the hashing
/// thread as they came (lent: no copy) or copied into the pieces it asks for.
struct PartReader<'o> {
    rx: mpsc::Receiver<Result<Bytes>>,
    held: Bytes,
    task: tokio::task::JoinHandle<()>,
    shown: &'o Path,
}

impl PartReader<'_> {
    /// Hands the next `len` bytes to `sink`, in the slices they came in.
    fn take(&mut self, len: usize, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let mut left = len;
        while left > 0 {
            if self.held.is_empty() {
                self.held = match self.rx.blocking_recv() {
                    Some(chunk) => chunk?,
                    None => return Err(Error::internal("a range ended before its last part").in_file(self.shown)),
                };
                continue;
            }
            let n = self.held.len().min(left);
            sink(self.held.get(..n).unwrap_or(&[]));
            bytes::Buf::advance(&mut self.held, n);
            left = left.saturating_sub(n);
        }
        Ok(())
    }
}

impl RangeReader for PartReader<'_> {
    fn read_next(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0usize;
        self.take(buf.len(), &mut |s| {
            let to = filled.saturating_add(s.len());
            if let Some(dst) = buf.get_mut(filled..to) {
                dst.copy_from_slice(s);
            }
            filled = to;
        })
    }

    fn feed(&mut self, buf: &mut [u8], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.take(buf.len(), sink)
    }
}

impl Drop for PartReader<'_> {
    /// A job that stops early (an error, a cancelled run) stops its fetches.
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A prefix of a store (empty, or ending in `/`): where the files an
/// object names are opened, by plain names only, and what a directory URL
/// lists.
#[derive(Debug)]
pub(crate) struct RemotePlace {
    store: Arc<Store>,
    prefix: String,
    shown: PathBuf,
}

/// `name` as one plain segment of a key, or an error naming it.
fn segment<'n>(name: &'n OsStr, shown: &Path) -> Result<&'n str> {
    let s = name.to_str().filter(|s| !s.is_empty() && *s != "." && *s != ".." && !s.contains('/'));
    s.ok_or_else(|| io_error("only a plain name is opened beside a remote object", &shown.join(name), None))
}

impl RemotePlace {
    /// The place as a `Beside` of the core.
    pub(crate) fn into_beside(self) -> Beside {
        Beside::remote(Arc::new(self))
    }

    fn open_key(&self, key: &str) -> Result<Source> {
        Ok(self.store.head(key)?.into_source())
    }

    /// Every object below the prefix, bounded by [`MAX_LISTED`].
    fn list(&self) -> Result<Vec<String>> {
        self.list_at_most(MAX_LISTED)
    }

    /// Every object below the prefix, named relative to it (`a`,
    /// `sub/b`); more than `max` is an error naming the prefix (a listing
    /// that never ends is refused, not held). An HTTP(S) host is walked
    /// through WebDAV ([`list`]).
    fn list_at_most(&self, max: usize) -> Result<Vec<String>> {
        if let Some(dav) = &self.store.dav {
            return self.store.runtime.block_on(async {
                let _permit = self.store.connections.acquire().await;
                dav.walk(&self.prefix, &self.shown, max).await
            });
        }
        let prefix = self.prefix.trim_end_matches('/');
        let location = (!prefix.is_empty())
            .then(|| Key::parse(prefix))
            .transpose()
            .map_err(|e| io_error(&e.to_string(), &self.shown, None))?;
        self.store.runtime.block_on(async {
            let _permit = self.store.connections.acquire().await;
            let mut listing = self.store.store.list(location.as_ref());
            let mut out = Vec::new();
            while let Some(meta) = listing.next().await {
                let meta = meta.map_err(|e| error(&e, &self.shown, None))?;
                if out.len() >= max {
                    let what = format!("the listing holds more than {max} objects");
                    return Err(io_error(&what, &self.shown, None));
                }
                // The service lists by key prefix: every key is below it.
                if let Some(name) = meta.location.as_ref().strip_prefix(self.prefix.as_str()) {
                    out.push(name.to_string());
                }
            }
            Ok(out)
        })
    }
}

impl RangeDir for RemotePlace {
    fn shown(&self) -> &Path {
        &self.shown
    }

    fn open(&self, name: &OsStr, _mode: ReadMode) -> Result<Source> {
        let name = segment(name, &self.shown)?;
        self.open_key(&format!("{}{name}", self.prefix))
    }

    fn open_below(&self, rel: &Path, _mode: ReadMode) -> Result<Source> {
        let mut key = self.prefix.clone();
        for (i, c) in rel.components().enumerate() {
            let Component::Normal(n) = c else {
                return Err(io_error("only plain names are opened below a remote prefix", &self.shown.join(rel), None));
            };
            if i > 0 {
                key.push('/');
            }
            key.push_str(segment(n, &self.shown)?);
        }
        self.open_key(&key)
    }

    fn holds_file(&self, name: &OsStr) -> bool {
        segment(name, &self.shown).is_ok_and(|n| self.store.head(&format!("{}{n}", self.prefix)).is_ok())
    }

    fn names(&self) -> Result<Vec<OsString>> {
        let mut names: Vec<OsString> =
            self.list()?.into_iter().filter(|n| !n.contains('/')).map(OsString::from).collect();
        names.sort();
        Ok(names)
    }

    fn walk(&self) -> Result<Vec<Vec<u8>>> {
        let mut names: Vec<Vec<u8>> = self.list()?.into_iter().map(String::into_bytes).collect();
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests;
