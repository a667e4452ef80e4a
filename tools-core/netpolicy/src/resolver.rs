//! [`PolicyResolver`]: the DNS resolver of an HTTP client that must only connect where
//! the [`Policy`] allows. It resolves with the system resolver and judges every
//! address before handing them to the client, so the connection goes to an address
//! that was checked — not to a second lookup an attacker's DNS could answer
//! differently (DNS rebinding).

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::policy::{Policy, lookup};

/// A `reqwest` resolver judging every answer with a [`Policy`].
#[derive(Debug)]
pub struct PolicyResolver(pub Arc<Policy>);

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.0);
        let host = name.as_str().to_string();
        Box::pin(async move {
            policy.check_name(&host)?;
            let lookup_host = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || lookup(&lookup_host, 0)).await??;
            policy.check_addrs(&host, &addrs)?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}
