//! Pages fetched in a session, kept 15 minutes (a session's state), so asking about the same URL
//! again does not fetch it again.

use crate::fetch::Page;
use agentry_plugin::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a fetched page is kept.
pub const KEPT_FOR: Duration = Duration::from_secs(15 * 60);

/// A session's fetched pages, by the URL asked for.
#[derive(Default)]
pub struct PageCache {
    pages: Mutex<HashMap<String, (Instant, Arc<Page>)>>,
}

impl PageCache {
    /// The page fetched for `url` within the last 15 minutes.
    pub fn get(&self, url: &str) -> Option<Arc<Page>> {
        let mut pages = lock(&self.pages);
        pages.retain(|_, (at, _)| at.elapsed() < KEPT_FOR);
        pages.get(url).map(|(_, page)| page.clone())
    }

    /// Keeps `page` as fetched for `url` now.
    pub fn put(&self, url: &str, page: Arc<Page>) {
        lock(&self.pages).insert(url.to_owned(), (Instant::now(), page));
    }
}
