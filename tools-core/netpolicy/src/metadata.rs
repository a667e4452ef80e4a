//! Cloud metadata endpoints: the addresses and host names at which a cloud instance
//! hands out its credentials. A prompt-injected page that makes the agent fetch one of
//! them steals the machine's cloud identity, so they are refused even when private
//! networks are allowed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Metadata service addresses.
const METADATA_IPS: [IpAddr; 8] = [
    // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, …
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    // AWS ECS task metadata and credentials.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    // AWS (Route 53 resolver; answers the metadata names).
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 253)),
    // Alibaba Cloud.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // Oracle Cloud Classic.
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    // AWS over IPv6 (Nitro): the metadata service and the resolver.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x253)),
    // AWS ECS task metadata over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)),
];

/// Host names that resolve to a metadata service inside a cloud.
const METADATA_NAMES: [&str; 7] = [
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.tencentyun.com",
];

/// True for a metadata service address.
pub fn is_metadata_ip(ip: IpAddr) -> bool {
    METADATA_IPS.contains(&ip)
}

/// True for a metadata host name (`host` normalised: lower case, no trailing dot).
pub fn is_metadata_name(host: &str) -> bool {
    METADATA_NAMES.contains(&host)
}
