//! A range of a blob streamed from the registry, asked again where the
//! connection drops ([`RangeStream`], made by [`Client::range_stream`]).

use reqwest::Url;

use super::client::{Client, TRIES, http_error, manifest_error};
use super::manifest::Descriptor;
use crate::http::error_words;
use crate::{Error, Result};

/// A range of a blob being read ([`Client::range_stream`]).
pub struct RangeStream<'a> {
    client: &'a Client,
    url: Url,
    name: String,
    /// The next byte to hand over, and the end of the range.
    at: u64,
    end: u64,
    response: Option<reqwest::Response>,
    /// The last piece received, and how much of it was handed over.
    held: Vec<u8>,
    used: usize,
    drops: u32,
}

impl Client {
    /// `len` bytes of the blob from `start`, streamed: a range request
    /// read a piece at a time, asked again from where it stopped when the
    /// connection drops (a body that ends early is never handed back short).
    pub fn range_stream(&self, d: &Descriptor, start: u64, len: u64) -> Result<RangeStream<'_>> {
        let name = self.blob_name(d);
        let end = start.checked_add(len).filter(|&e| e <= d.size).ok_or_else(|| {
            manifest_error(&name, format!("a read of {len} bytes at {start} past its {} bytes", d.size))
        })?;
        let url = self.repo_url(&format!("blobs/{}", d.digest()))?;
        Ok(RangeStream::new(self, url, name, start, end))
    }
}

impl<'a> RangeStream<'a> {
    /// The bytes `at..end` of the blob at `url` (named `name` in errors).
    fn new(client: &'a Client, url: Url, name: String, at: u64, end: u64) -> RangeStream<'a> {
        RangeStream { client, url, name, at, end, response: None, held: Vec::new(), used: 0, drops: 0 }
    }

    /// Fills `buf` with the range's next bytes: all of them, or an error.
    pub fn read_exact(&mut self, buf: &mut [u8]) -> Result<()> {
        let want_end = self.at.checked_add(buf.len() as u64).filter(|&e| e <= self.end);
        if want_end.is_none() {
            return Err(http_error(&self.url, "a read past the range asked for"));
        }
        let mut filled = 0usize;
        while filled < buf.len() {
            let held = self.held.get(self.used..).unwrap_or(&[]);
            if !held.is_empty() {
                let n = held.len().min(buf.len().saturating_sub(filled));
                let (Some(dst), Some(src)) = (buf.get_mut(filled..filled.saturating_add(n)), held.get(..n)) else {
                    return Err(Error::internal("a range piece past its buffer"));
                };
                dst.copy_from_slice(src);
                filled = filled.saturating_add(n);
                self.used = self.used.saturating_add(n);
                self.at = self.at.saturating_add(n as u64);
                continue;
            }
            self.next_piece()?;
        }
        Ok(())
    }

    /// The next piece of the body, the request made (again) as needed.
    fn next_piece(&mut self) -> Result<()> {
        let client = self.client;
        let (url, name, at, end) = (self.url.clone(), self.name.clone(), self.at, self.end);
        let mut response = self.response.take();
        let got = client.rt.block_on(async {
            let r = match response.as_mut() {
                Some(r) => r,
                None => response.insert(client.open_range(&url, &name, at, end).await?),
            };
            r.chunk().await.map_err(|e| http_error(&url, error_words(&e)))
        });
        match got {
            Ok(Some(piece)) => {
                self.response = response;
                self.held = piece.to_vec();
                self.used = 0;
                Ok(())
            }
            // The body ended, or the connection dropped, before the range
            // did: asked again from here, a few times.
            Ok(None) | Err(_) if self.drops.saturating_add(1) < TRIES => {
                self.drops = self.drops.saturating_add(1);
                self.response = None;
                Ok(())
            }
            Ok(None) => Err(http_error(
                &self.url,
                format!("the body ended at byte {} of a range ending at {}", self.at, self.end),
            )),
            Err(e) => Err(e),
        }
    }
}
