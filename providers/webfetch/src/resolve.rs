//! Name resolution with the address guard in it: a name is looked up, every address the guard
//! refuses is dropped, and the connection may only use what is left. Checking the addresses
//! that are actually connected to (not a separate lookup beforehand) is what defeats DNS
//! rebinding; redirects resolve their names here too.

use crate::error::FetchError;
use crate::guard::AddressGuard;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::SocketAddr;
use std::sync::Arc;

/// Looks names up with the system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Resolve for SystemLookup {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let addresses = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let addresses: Addrs = Box::new(addresses.collect::<Vec<_>>().into_iter());
            Ok(addresses)
        })
    }
}

/// A last look at the addresses a connection is about to use, after the guard (tests make it
/// fail rather than let a packet leave loopback).
pub type BeforeConnect = Arc<dyn Fn(&str, &[SocketAddr]) + Send + Sync>;

/// `lookup`, with the addresses the guard refuses taken out; a name left with none fails.
pub struct GuardedResolver {
    lookup: Arc<dyn Resolve>,
    guard: AddressGuard,
    before_connect: Option<BeforeConnect>,
}

impl GuardedResolver {
    /// Names looked up by `lookup`, filtered by `guard`, seen by `before_connect` last.
    pub fn new(
        lookup: Arc<dyn Resolve>,
        guard: AddressGuard,
        before_connect: Option<BeforeConnect>,
    ) -> Self {
        Self {
            lookup,
            guard,
            before_connect,
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let lookup = self.lookup.resolve(name);
        let guard = self.guard.clone();
        let before_connect = self.before_connect.clone();
        Box::pin(async move {
            let mut refused = None;
            let allowed: Vec<SocketAddr> = lookup
                .await?
                .filter(|address| match guard.check(address.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused.get_or_insert(why);
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let error = match refused {
                    Some(why) => FetchError::Refused(format!("{host} resolves to {why}")),
                    None => FetchError::Transport(format!("{host} resolves to no address")),
                };
                return Err(error.into());
            }
            if let Some(check) = &before_connect {
                check(&host, &allowed);
            }
            let addresses: Addrs = Box::new(allowed.into_iter());
            Ok(addresses)
        })
    }
}
