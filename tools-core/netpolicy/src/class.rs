//! [`AddressClass`]: what kind of network an IP address belongs to.
//!
//! Everything that is not [`AddressClass::Public`] is internal: a tool fetching a URL
//! for the model must not reach it unless the user allowed private networks, and a
//! [`AddressClass::Metadata`] address (cloud instance credentials) never. IPv6 forms
//! that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged
//! by the IPv4 address they lead to (`embedded.rs`); forms whose target cannot be
//! judged (Teredo, local-use NAT64) are reserved, so they fail closed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::embedded::{Embedded, embedded_v4};
use crate::metadata::is_metadata_ip;

/// The class of one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// A routable public address.
    Public,
    /// A cloud metadata service (169.254.169.254, fd00:ec2::254, …): refused always.
    Metadata,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918 (10/8, 172.16/12, 192.168/16), IPv6 unique-local fc00::/7 and the
    /// deprecated site-local fec0::/10.
    Private,
    /// 100.64.0.0/10, carrier-grade NAT (shared address space).
    SharedNat,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// 0.0.0.0/8 ("this network": Linux connects 0.0.0.0 to the local host) and ::.
    Unspecified,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15, 2001:2::/48.
    Benchmarking,
    /// 240.0.0.0/4, the IETF protocol block 192.0.0.0/24, the 6to4 relay anycast
    /// 192.88.99.0/24, discard-only 100::/64, Teredo 2001::/32, local-use NAT64
    /// 64:ff9b:1::/48, and the rest of the IETF block 2001::/23.
    Reserved,
}

impl AddressClass {
    /// Every class.
    pub const ALL: [AddressClass; 12] = [
        AddressClass::Public,
        AddressClass::Metadata,
        AddressClass::Loopback,
        AddressClass::Private,
        AddressClass::SharedNat,
        AddressClass::LinkLocal,
        AddressClass::Unspecified,
        AddressClass::Multicast,
        AddressClass::Broadcast,
        AddressClass::Documentation,
        AddressClass::Benchmarking,
        AddressClass::Reserved,
    ];

    /// True for every class but [`AddressClass::Public`].
    pub fn is_internal(self) -> bool {
        self != AddressClass::Public
    }

    /// A short name for messages (`"loopback"`, `"cloud metadata"`, …).
    pub fn describe(self) -> &'static str {
        match self {
            AddressClass::Public => "public",
            AddressClass::Metadata => "cloud metadata",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::SharedNat => "carrier-grade NAT",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Documentation => "documentation",
            AddressClass::Benchmarking => "benchmarking",
            AddressClass::Reserved => "reserved",
        }
    }
}

/// Classify one address.
pub fn classify(ip: IpAddr) -> AddressClass {
    if is_metadata_ip(ip) {
        return AddressClass::Metadata;
    }
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Embedded::V4(v4) => classify(IpAddr::V4(v4)),
            Embedded::Unjudgeable => AddressClass::Reserved,
            Embedded::None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, c, _] = ip.octets();
    if ip.is_broadcast() {
        AddressClass::Broadcast
    } else if a == 0 {
        AddressClass::Unspecified
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_private() {
        AddressClass::Private
    } else if a == 100 && (64..128).contains(&b) {
        AddressClass::SharedNat
    } else if ip.is_link_local() {
        AddressClass::LinkLocal
    } else if ip.is_multicast() {
        AddressClass::Multicast
    } else if ip.is_documentation() {
        AddressClass::Documentation
    } else if a == 198 && (b == 18 || b == 19) {
        AddressClass::Benchmarking
    } else if a >= 240 || (a == 192 && b == 0 && c == 0) || (a == 192 && b == 88 && c == 99) {
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let s = ip.segments();
    if ip.is_unspecified() {
        AddressClass::Unspecified
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_multicast() {
        AddressClass::Multicast
    } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        AddressClass::Private
    } else if s[0] & 0xffc0 == 0xfe80 {
        AddressClass::LinkLocal
    } else if s[..2] == [0x2001, 0xdb8] || s[0] & 0xfff0 == 0x3ff0 {
        AddressClass::Documentation
    } else if s[..3] == [0x2001, 2, 0] {
        AddressClass::Benchmarking
    } else if s[..4] == [0x100, 0, 0, 0] || (s[0] == 0x2001 && s[1] < 0x200) || s[0] == 0 {
        // Discard-only, the IETF protocol block, and whatever else ::/16 holds that the
        // embedded forms did not claim.
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}
