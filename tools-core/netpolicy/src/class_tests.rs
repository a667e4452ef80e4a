//! Table tests of [`classify`]: every class, its edges, and the IPv6 forms that carry
//! an IPv4 address.

use std::net::IpAddr;

use crate::class::{AddressClass, classify};
use crate::embedded::{Embedded, embedded_v4};

use AddressClass::*;

fn check(cases: &[(&str, AddressClass)]) {
    for (ip, class) in cases {
        let parsed: IpAddr = ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}"));
        assert_eq!(classify(parsed), *class, "{ip}");
    }
}

#[test]
fn public_addresses_are_public() {
    check(&[
        ("8.8.8.8", Public),
        ("1.1.1.1", Public),
        ("93.184.216.34", Public),
        ("172.15.255.255", Public),
        ("172.32.0.0", Public),
        ("100.63.255.255", Public),
        ("100.128.0.0", Public),
        ("198.17.255.255", Public),
        ("198.20.0.0", Public),
        ("239.255.255.255", Multicast),
        ("223.255.255.255", Public),
        ("2606:4700:4700::1111", Public),
        ("2a00:1450:4001::200e", Public),
    ]);
}

#[test]
fn loopback_and_unspecified() {
    check(&[
        ("127.0.0.1", Loopback),
        ("127.255.255.254", Loopback),
        ("::1", Loopback),
        ("0.0.0.0", Unspecified),
        ("0.1.2.3", Unspecified),
        ("::", Unspecified),
    ]);
}

#[test]
fn private_ranges() {
    check(&[
        ("10.0.0.1", Private),
        ("10.255.255.255", Private),
        ("172.16.0.1", Private),
        ("172.31.255.255", Private),
        ("192.168.0.1", Private),
        ("fc00::1", Private),
        ("fd12:3456::1", Private),
        ("fec0::1", Private),
    ]);
}

#[test]
fn carrier_grade_nat_and_link_local() {
    check(&[
        ("100.64.0.0", SharedNat),
        ("100.127.255.255", SharedNat),
        ("169.254.0.1", LinkLocal),
        ("169.254.255.255", LinkLocal),
        ("fe80::1", LinkLocal),
        ("febf::1", LinkLocal),
    ]);
}

#[test]
fn multicast_and_broadcast() {
    check(&[
        ("224.0.0.1", Multicast),
        ("ff02::1", Multicast),
        ("ff05::2", Multicast),
        ("255.255.255.255", Broadcast),
    ]);
}

#[test]
fn documentation_benchmarking_and_reserved() {
    check(&[
        ("192.0.2.1", Documentation),
        ("198.51.100.7", Documentation),
        ("203.0.113.9", Documentation),
        ("2001:db8::1", Documentation),
        ("3fff::1", Documentation),
        ("198.18.0.1", Benchmarking),
        ("198.19.255.255", Benchmarking),
        ("2001:2::1", Benchmarking),
        ("240.0.0.1", Reserved),
        ("254.255.255.255", Reserved),
        ("192.0.0.8", Reserved),
        ("192.88.99.1", Reserved),
        ("100::1", Reserved),
        ("2001:10::1", Reserved),
        ("::2:1:0:0:1", Reserved),
    ]);
}

#[test]
fn metadata_addresses() {
    check(&[
        ("169.254.169.254", Metadata),
        ("169.254.170.2", Metadata),
        ("169.254.169.253", Metadata),
        ("100.100.100.200", Metadata),
        ("192.0.0.192", Metadata),
        ("fd00:ec2::254", Metadata),
        ("fd00:ec2::23", Metadata),
    ]);
}

#[test]
fn ipv4_mapped_and_compatible_ipv6_is_judged_as_ipv4() {
    check(&[
        ("::ffff:127.0.0.1", Loopback),
        ("::ffff:10.0.0.1", Private),
        ("::ffff:169.254.169.254", Metadata),
        ("::ffff:8.8.8.8", Public),
        ("::ffff:7f00:1", Loopback),
        ("::127.0.0.1", Loopback),
        ("::10.1.2.3", Private),
        ("::169.254.169.254", Metadata),
        ("::8.8.8.8", Public),
    ]);
}

#[test]
fn nat64_is_judged_by_its_ipv4_or_refused() {
    check(&[
        ("64:ff9b::127.0.0.1", Loopback),
        ("64:ff9b::a9fe:a9fe", Metadata),
        ("64:ff9b::10.0.0.1", Private),
        ("64:ff9b::198.18.0.1", Benchmarking),
        ("64:ff9b::8.8.8.8", Public),
        // Local-use NAT64: the IPv4 position depends on the prefix length.
        ("64:ff9b:1::8.8.8.8", Reserved),
        ("64:ff9b:1:ffff::1", Reserved),
    ]);
}

#[test]
fn six_to_four_is_judged_by_its_ipv4() {
    check(&[
        ("2002:7f00:1::", Loopback),
        ("2002:a9fe:a9fe::1", Metadata),
        ("2002:c0a8:101::1", Private),
        ("2002:808:808::1", Public),
    ]);
}

#[test]
fn teredo_is_reserved() {
    check(&[
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Reserved),
        ("2001::1", Reserved),
    ]);
}

#[test]
fn plain_ipv6_carries_no_ipv4() {
    for ip in ["2606:4700::1", "fe80::1", "::1", "::"] {
        assert_eq!(embedded_v4(ip.parse().unwrap()), Embedded::None, "{ip}");
    }
}

#[test]
fn only_public_is_not_internal() {
    for class in AddressClass::ALL {
        assert_eq!(class.is_internal(), class != Public, "{class:?}");
        assert!(!class.describe().is_empty());
    }
}
