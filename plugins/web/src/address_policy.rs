//! Which network addresses the web tools may connect to.
//!
//! A page the model reads is untrusted: a prompt-injected page could ask the agent to
//! fetch `http://169.254.169.254/` (the cloud metadata service) or a service on the
//! user's private network. Every hop of a fetch is judged here — the scheme of its URL,
//! a literal IP in it, and every IP its host name resolves to ([`PolicyResolver`] is
//! the DNS resolver of the HTTP client, so the connection goes to the address that was
//! checked, not to a second lookup an attacker's DNS could answer differently).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an address or URL was refused.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// Only `http` and `https` are fetched.
    #[error("Blocked: only http and https URLs can be fetched (got {0}:)")]
    Scheme(String),
    /// The address is loopback, private, link-local, metadata or otherwise internal.
    #[error("Blocked: {host} ({ip}) is a private or internal network address")]
    Private {
        /// The host name as written in the URL.
        host: String,
        /// The refused address.
        ip: IpAddr,
    },
    /// The URL has no host.
    #[error("Blocked: the URL has no host")]
    NoHost,
}

/// True for addresses a fetch must not reach: loopback, private ranges, link-local
/// (which holds the metadata service), carrier-grade NAT, unspecified, multicast,
/// broadcast, reserved, and IPv6 unique-local; IPv4-mapped IPv6 is judged as IPv4.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_internal_v4(v4),
            None => is_internal_v6(v6),
        },
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // 100.64.0.0/10, carrier-grade NAT
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // 192.0.0.0/24, IETF protocol
        || (a == 198 && (b == 18 || b == 19)) // 198.18.0.0/15, benchmarking
        || a >= 240 // 240.0.0.0/4, reserved
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // fc00::/7, unique local (fd00:ec2::254 is AWS metadata)
        || (first & 0xffc0) == 0xfe80 // fe80::/10, link-local
        || (first & 0xffc0) == 0xfec0 // fec0::/10, site-local (deprecated)
        || (ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0]) // NAT64 of any IPv4
        || ip.segments()[..2] == [0x2001, 0xdb8] // documentation
}

/// The address policy of one plugin instance.
#[derive(Clone, Debug, Default)]
pub struct AddressPolicy {
    /// `allow_private_networks = true`: internal addresses are allowed too.
    pub allow_private: bool,
    /// Hosts (as written in URLs, lower case) exempt from the internal-address check:
    /// `allowed_hosts = ["wiki.lan"]` lets the agent read one intranet site.
    pub allowed_hosts: Vec<String>,
}

impl AddressPolicy {
    /// Judge a URL before it is requested: scheme, host, and a literal IP host.
    /// (Host names are judged by [`PolicyResolver`] when they are resolved.)
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme(url.scheme().to_string()));
        }
        let ip = match url.host() {
            None => return Err(Refusal::NoHost),
            Some(url::Host::Domain(_)) => return Ok(()),
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        };
        self.check_ip(url.host_str().unwrap_or_default(), ip)
    }

    /// Judge one resolved address of `host`.
    pub fn check_ip(&self, host: &str, ip: IpAddr) -> Result<(), Refusal> {
        let exempt = self.allow_private
            || self
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host.trim_matches(['[', ']'])));
        if !exempt && is_internal(ip) {
            return Err(Refusal::Private {
                host: host.to_string(),
                ip,
            });
        }
        Ok(())
    }
}

/// The HTTP client's DNS resolver: the system resolver, then [`AddressPolicy`] on every
/// address. One refused address refuses the host (a name that resolves to both a public
/// and a private address is a DNS-rebinding pattern).
#[derive(Debug)]
pub struct PolicyResolver(pub std::sync::Arc<AddressPolicy>);

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = std::sync::Arc::clone(&self.0);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await??
                    .collect();
            for addr in &addrs {
                policy.check_ip(&host, addr.ip())?;
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_addresses() {
        let cases = [
            ("127.0.0.1", true),
            ("10.1.2.3", true),
            ("172.16.0.1", true),
            ("172.32.0.1", false),
            ("192.168.1.1", true),
            ("169.254.169.254", true),
            ("100.64.0.1", true),
            ("0.0.0.0", true),
            ("255.255.255.255", true),
            ("224.0.0.1", true),
            ("8.8.8.8", false),
            ("93.184.216.34", false),
            ("::1", true),
            ("::", true),
            ("fd00:ec2::254", true),
            ("fe80::1", true),
            ("::ffff:127.0.0.1", true),
            ("::ffff:169.254.169.254", true),
            ("64:ff9b::a9fe:a9fe", true),
            ("2606:4700:4700::1111", false),
            ("::ffff:8.8.8.8", false),
        ];
        for (ip, internal) in cases {
            let parsed: IpAddr = ip.parse().unwrap();
            assert_eq!(is_internal(parsed), internal, "{ip}");
        }
    }

    #[test]
    fn refuses_other_schemes_and_literal_internal_hosts() {
        let policy = AddressPolicy::default();
        let check = |u: &str| policy.check_url(&url::Url::parse(u).unwrap());
        assert!(matches!(
            check("file:///etc/passwd"),
            Err(Refusal::Scheme(_))
        ));
        assert!(matches!(
            check("ftp://example.com/"),
            Err(Refusal::Scheme(_))
        ));
        assert!(matches!(
            check("http://169.254.169.254/latest/meta-data/"),
            Err(Refusal::Private { .. })
        ));
        assert!(matches!(
            check("http://[::1]:8080/"),
            Err(Refusal::Private { .. })
        ));
        assert!(check("https://example.com/").is_ok());
        let open = AddressPolicy {
            allow_private: true,
            ..AddressPolicy::default()
        };
        assert!(
            open.check_url(&url::Url::parse("http://127.0.0.1/").unwrap())
                .is_ok()
        );
        let one_host = AddressPolicy {
            allowed_hosts: vec!["10.0.0.7".into()],
            ..AddressPolicy::default()
        };
        assert!(
            one_host
                .check_url(&url::Url::parse("http://10.0.0.7/").unwrap())
                .is_ok()
        );
        assert!(
            one_host
                .check_url(&url::Url::parse("http://10.0.0.8/").unwrap())
                .is_err()
        );
    }
}
