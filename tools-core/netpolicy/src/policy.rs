//! [`Policy`]: may a tool reach this URL, host name or address for the model?
//!
//! A URL is judged by its scheme (only `http`/`https`), its host as the URL parser
//! normalised it (the WHATWG parser turns `http://2130706433/`, `http://0x7f.1/` and
//! `http://0177.0.0.1/` into `127.0.0.1`, and `http://a.com@127.0.0.1/` has host
//! `127.0.0.1`), names that mean an internal host whatever DNS says (`localhost` and
//! `*.localhost`, which browsers resolve to loopback themselves; the metadata names),
//! and every address its host resolves to. A name that resolves to one refused address
//! is refused as a whole: a name resolving to both a public and a private address is a
//! DNS-rebinding pattern.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use url::{Host, Url};

use crate::class::{AddressClass, classify};
use crate::metadata::is_metadata_name;

/// Why a URL, name or address was refused.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// The text is not a URL.
    #[error("{url:?} is not a valid URL ({reason})")]
    BadUrl {
        /// The text given (at most 200 characters of it).
        url: String,
        /// The parser's complaint.
        reason: String,
    },
    /// Only `http` and `https` are fetched.
    #[error("only http and https URLs can be opened (got {0}:)")]
    Scheme(String),
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// A cloud metadata endpoint (refused always).
    #[error("{host} is a cloud metadata endpoint{}", at(host, *ip))]
    Metadata {
        /// The host as written in the URL.
        host: String,
        /// The address, when the refusal came from one.
        ip: Option<IpAddr>,
    },
    /// A loopback, private, link-local or otherwise internal address or name.
    #[error(
        "{host}{} is a private or internal network address ({}); set allow_private_networks = true in the plugin's configuration to allow it",
        at(host, *ip),
        class.describe()
    )]
    Internal {
        /// The host as written in the URL.
        host: String,
        /// The address, when the refusal came from one (not for `localhost` names).
        ip: Option<IpAddr>,
        /// Its class.
        class: AddressClass,
    },
    /// The host name could not be resolved.
    #[error("cannot resolve {host}: {reason}")]
    Unresolvable {
        /// The host name.
        host: String,
        /// The resolver's complaint.
        reason: String,
    },
}

/// ` (address)` after a host name; nothing after a literal address.
fn at(host: &str, ip: Option<IpAddr>) -> String {
    match ip {
        Some(ip) if host.trim_matches(['[', ']']) != ip.to_string() => format!(" ({ip})"),
        _ => String::new(),
    }
}

/// The address policy of one tool or plugin instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// `allow_private_networks = true`: internal addresses are allowed too (metadata
    /// endpoints stay refused).
    pub allow_private: bool,
    /// Hosts (as written in URLs, any case, trailing dot or not) exempt from the
    /// internal-address check: `allowed_hosts = ["wiki.lan"]` lets the agent read one
    /// intranet site. Metadata endpoints stay refused.
    pub allowed_hosts: Vec<String>,
}

/// `host` as compared: lower case, without brackets and trailing dots.
pub fn normalise_host(host: &str) -> String {
    host.trim_matches(['[', ']'])
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// True for names every browser and most resolvers send to loopback (RFC 6761).
fn is_localhost_name(host: &str) -> bool {
    host == "localhost" || host.ends_with(".localhost")
}

impl Policy {
    /// Parse `raw` and judge it with [`Policy::check_url`].
    pub fn parse(&self, raw: &str) -> Result<Url, Refusal> {
        let url = Url::parse(raw.trim()).map_err(|e| Refusal::BadUrl {
            url: raw.chars().take(200).collect(),
            reason: e.to_string(),
        })?;
        self.check_url(&url)?;
        Ok(url)
    }

    /// [`Policy::parse`], then [`Policy::resolve`]: for a caller that cannot pin the
    /// addresses (a browser resolves names itself), the URL when it may be opened.
    pub fn parse_and_resolve(&self, raw: &str) -> Result<Url, Refusal> {
        let url = self.parse(raw)?;
        self.resolve(&url)?;
        Ok(url)
    }

    /// Judge a URL without resolving it: scheme, a literal IP host, and host names
    /// that are internal whatever DNS answers. (Resolved addresses are judged by
    /// [`Policy::resolve`] or the HTTP client's [`crate::PolicyResolver`].)
    pub fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme(url.scheme().to_string()));
        }
        match url.host() {
            None => Err(Refusal::NoHost),
            Some(Host::Domain(name)) => self.check_name(name),
            Some(Host::Ipv4(v4)) => self.check_ip(&v4.to_string(), IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.check_ip(&format!("[{v6}]"), IpAddr::V6(v6)),
        }
    }

    /// Judge a host name by itself: metadata names always, `localhost` names unless
    /// exempt.
    pub fn check_name(&self, host: &str) -> Result<(), Refusal> {
        let name = normalise_host(host);
        if is_metadata_name(&name) {
            return Err(Refusal::Metadata {
                host: host.to_string(),
                ip: None,
            });
        }
        if is_localhost_name(&name) && !self.exempt(&name) {
            return Err(Refusal::Internal {
                host: host.to_string(),
                ip: None,
                class: AddressClass::Loopback,
            });
        }
        Ok(())
    }

    /// Judge one address `host` resolved to (or `host` itself, when literal).
    pub fn check_ip(&self, host: &str, ip: IpAddr) -> Result<(), Refusal> {
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Metadata => Err(Refusal::Metadata {
                host: host.to_string(),
                ip: Some(ip),
            }),
            _ if self.exempt(&normalise_host(host)) => Ok(()),
            class => Err(Refusal::Internal {
                host: host.to_string(),
                ip: Some(ip),
                class,
            }),
        }
    }

    /// True when the internal-address check does not apply to `host` (normalised).
    fn exempt(&self, host: &str) -> bool {
        self.allow_private || self.allowed_hosts.iter().any(|h| normalise_host(h) == host)
    }

    /// Judge `url` and every address its host resolves to (a blocking lookup); the
    /// addresses, for a caller that connects itself (pin them: a second lookup may
    /// answer differently).
    pub fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>, Refusal> {
        self.check_url(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(v4)) => vec![SocketAddr::new(IpAddr::V4(v4), port)],
            Some(Host::Ipv6(v6)) => vec![SocketAddr::new(IpAddr::V6(v6), port)],
            Some(Host::Domain(name)) => lookup(name, port)?,
            None => return Err(Refusal::NoHost),
        };
        self.check_addrs(url.host_str().unwrap_or_default(), &addrs)?;
        Ok(addrs)
    }

    /// Judge every resolved address of `host`; none at all is a refusal too.
    pub fn check_addrs(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), Refusal> {
        if addrs.is_empty() {
            return Err(Refusal::Unresolvable {
                host: host.to_string(),
                reason: "no addresses".into(),
            });
        }
        addrs.iter().try_for_each(|a| self.check_ip(host, a.ip()))
    }
}

/// The system resolver's addresses for `name`.
pub fn lookup(name: &str, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
    (name, port)
        .to_socket_addrs()
        .map(Iterator::collect)
        .map_err(|e| Refusal::Unresolvable {
            host: name.to_string(),
            reason: e.to_string(),
        })
}
