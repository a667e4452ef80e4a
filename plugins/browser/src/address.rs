//! The address policy for navigation: only `http(s)` URLs, and — unless the
//! configuration allows private networks — only hosts that resolve to public addresses.
//! Cloud metadata addresses are refused always, so a prompt-injected page cannot make the
//! agent read instance credentials.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use url::Url;

use crate::error::BrowserError;

/// Metadata services reachable from cloud instances.
const METADATA: [IpAddr; 3] = [
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// How an address is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A routable public address.
    Public,
    /// Private, loopback, link-local, unspecified, multicast or otherwise internal.
    Private,
    /// A cloud metadata service.
    Metadata,
}

/// Classify one address.
pub fn classify(ip: IpAddr) -> Class {
    if METADATA.contains(&ip) {
        return Class::Metadata;
    }
    let private = match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => return classify(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || first & 0xfe00 == 0xfc00
                    || first & 0xffc0 == 0xfe80
            }
        },
    };
    if private {
        Class::Private
    } else {
        Class::Public
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
}

/// Check `raw` against the policy; the parsed URL when it may be opened.
pub fn check(raw: &str, allow_private: bool) -> Result<Url, BrowserError> {
    let url = Url::parse(raw.trim())
        .map_err(|e| BrowserError::Refused(format!("{raw:?} is not a valid URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(BrowserError::Refused(format!(
            "only http and https URLs may be opened, not {}:",
            url.scheme()
        )));
    }
    let host = url
        .host_str()
        .ok_or_else(|| BrowserError::Refused(format!("{raw:?} has no host")))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (host, port)
            .to_socket_addrs()
            .map_err(|e| BrowserError::Other(format!("cannot resolve {host}: {e}")))?
            .map(|a| a.ip())
            .collect(),
    };
    for ip in addresses {
        match classify(ip) {
            Class::Metadata => {
                return Err(BrowserError::Refused(format!(
                    "URL targets a cloud metadata endpoint ({ip})"
                )));
            }
            Class::Private if !allow_private => {
                return Err(BrowserError::Refused(format!(
                    "URL targets a private or internal address ({host} -> {ip}); set allow_private_networks = true in [plugins.config.browser] to allow it"
                )));
            }
            _ => {}
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_addresses() {
        let cases = [
            ("8.8.8.8", Class::Public),
            ("127.0.0.1", Class::Private),
            ("10.1.2.3", Class::Private),
            ("172.16.0.1", Class::Private),
            ("192.168.1.1", Class::Private),
            ("100.64.0.1", Class::Private),
            ("0.0.0.0", Class::Private),
            ("169.254.1.1", Class::Private),
            ("169.254.169.254", Class::Metadata),
            ("100.100.100.200", Class::Metadata),
            ("::1", Class::Private),
            ("fe80::1", Class::Private),
            ("fd12::1", Class::Private),
            ("fd00:ec2::254", Class::Metadata),
            ("::ffff:127.0.0.1", Class::Private),
            ("::ffff:169.254.169.254", Class::Metadata),
            ("2606:4700::1111", Class::Public),
        ];
        for (ip, class) in cases {
            assert_eq!(classify(ip.parse().unwrap()), class, "{ip}");
        }
    }

    #[test]
    fn refuses_other_schemes() {
        for url in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,x",
            "ftp://a.b/",
        ] {
            assert!(
                matches!(check(url, true), Err(BrowserError::Refused(_))),
                "{url}"
            );
        }
    }

    #[test]
    fn private_addresses_follow_the_setting() {
        assert!(check("http://127.0.0.1:8080/", false).is_err());
        assert!(check("http://localhost/", false).is_err());
        assert!(check("http://[::1]/", false).is_err());
        assert!(check("http://127.0.0.1:8080/", true).is_ok());
    }

    #[test]
    fn metadata_is_refused_even_when_private_is_allowed() {
        assert!(check("http://169.254.169.254/latest/meta-data/", true).is_err());
    }
}
