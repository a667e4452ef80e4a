//! IPv6 addresses that lead to an IPv4 address: a connection to one of them reaches
//! (or may reach) the IPv4 host it carries, so it is judged as that host.
//!
//! - IPv4-mapped `::ffff:a.b.c.d` (dual-stack sockets connect to the IPv4 address);
//! - IPv4-compatible `::a.b.c.d` (deprecated, still routed by some stacks);
//! - NAT64 well-known prefix `64:ff9b::a.b.c.d` (RFC 6052: a NAT64 gateway forwards
//!   it to the IPv4 address);
//! - 6to4 `2002:AABB:CCDD::/48` (RFC 3056: the relay forwards to `AA.BB.CC.DD`).
//!
//! Teredo (`2001::/32`) and local-use NAT64 (`64:ff9b:1::/48`, RFC 8215, whose IPv4
//! position depends on a prefix length we cannot know) cannot be judged reliably, so
//! they are [`Embedded::Unjudgeable`] and classed as reserved.

use std::net::{Ipv4Addr, Ipv6Addr};

/// What an IPv6 address carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedded {
    /// It leads to this IPv4 address.
    V4(Ipv4Addr),
    /// It tunnels or translates to a host we cannot determine.
    Unjudgeable,
    /// A plain IPv6 address.
    None,
}

/// The IPv4 address `ip` leads to, if any.
pub fn embedded_v4(ip: Ipv6Addr) -> Embedded {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Embedded::V4(v4);
    }
    // `::` and `::1` are IPv6's own unspecified and loopback addresses, not
    // IPv4-compatible forms of 0.0.0.0 and 0.0.0.1.
    if s[..6] == [0; 6] && u32::from(low) > 1 {
        return Embedded::V4(low);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Embedded::V4(low);
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        return Embedded::Unjudgeable;
    }
    if s[0] == 0x2002 {
        return Embedded::V4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    if s[..2] == [0x2001, 0] {
        return Embedded::Unjudgeable;
    }
    Embedded::None
}
