//! Tests of [`Policy`]: URL spellings of internal hosts, names, exemptions, resolution,
//! the `reqwest` resolver, and property tests that no input panics.

use std::net::IpAddr;

use proptest::prelude::*;

use crate::class::AddressClass;
use crate::policy::{Policy, Refusal};

fn strict() -> Policy {
    Policy::default()
}

fn open() -> Policy {
    Policy {
        allow_private: true,
        ..Policy::default()
    }
}

/// The refused address's class, `Metadata` for metadata refusals, `Public` when allowed.
fn verdict(policy: &Policy, url: &str) -> Result<AddressClass, Refusal> {
    match policy.parse(url) {
        Ok(_) => Ok(AddressClass::Public),
        Err(Refusal::Internal { class, .. }) => Ok(class),
        Err(Refusal::Metadata { .. }) => Ok(AddressClass::Metadata),
        Err(other) => Err(other),
    }
}

#[test]
fn numeric_ipv4_spellings_are_normalised_before_judging() {
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://0177.0.0.01/",
        "http://127.1/",
        "http://127.0.1/",
        "http://0x7F.0x00.0x00.0x01/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "HTTP://127.0.0.1:8080/x",
    ] {
        assert_eq!(verdict(&strict(), url), Ok(AddressClass::Loopback), "{url}");
    }
}

#[test]
fn metadata_spellings_are_refused_even_when_private_networks_are_allowed() {
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/",
        "http://0xa9fea9fe/",
        "http://0251.0376.0251.0376/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.GOOGLE.INTERNAL./",
        "http://metadata/",
        "http://metadata.goog/",
        "http://instance-data/",
        "http://user:pw@169.254.169.254/",
    ] {
        assert_eq!(verdict(&open(), url), Ok(AddressClass::Metadata), "{url}");
        let exempt = Policy {
            allowed_hosts: vec!["169.254.169.254".into(), "metadata".into()],
            ..open()
        };
        assert_eq!(verdict(&exempt, url), Ok(AddressClass::Metadata), "{url}");
    }
}

#[test]
fn userinfo_does_not_hide_the_host() {
    assert_eq!(
        verdict(&strict(), "http://example.com@127.0.0.1/"),
        Ok(AddressClass::Loopback)
    );
    assert_eq!(
        verdict(&strict(), "http://example.com:80@10.0.0.1:8080/"),
        Ok(AddressClass::Private)
    );
    assert_eq!(
        verdict(&strict(), "http://127.0.0.1@example.com/"),
        Ok(AddressClass::Public)
    );
}

#[test]
fn localhost_names_are_loopback_with_or_without_trailing_dots() {
    for url in [
        "http://localhost/",
        "http://localhost./",
        "http://LOCALHOST:9000/",
        "http://foo.localhost/",
        "http://a.b.localhost./",
    ] {
        assert_eq!(verdict(&strict(), url), Ok(AddressClass::Loopback), "{url}");
        assert_eq!(verdict(&open(), url), Ok(AddressClass::Public), "{url}");
    }
    assert_eq!(
        verdict(&strict(), "http://localhost.example.com/"),
        Ok(AddressClass::Public)
    );
}

#[test]
fn internal_literals_of_every_class_are_refused() {
    let cases = [
        ("http://10.0.0.1/", AddressClass::Private),
        ("http://[fd00::1]/", AddressClass::Private),
        ("http://100.64.1.1/", AddressClass::SharedNat),
        ("http://169.254.1.1/", AddressClass::LinkLocal),
        ("http://[fe80::1]/", AddressClass::LinkLocal),
        ("http://0.0.0.0:8080/", AddressClass::Unspecified),
        ("http://[::]/", AddressClass::Unspecified),
        ("http://224.0.0.251/", AddressClass::Multicast),
        ("http://255.255.255.255/", AddressClass::Broadcast),
        ("http://192.0.2.1/", AddressClass::Documentation),
        ("http://198.18.0.1/", AddressClass::Benchmarking),
        ("http://240.0.0.1/", AddressClass::Reserved),
        ("http://[64:ff9b::7f00:1]/", AddressClass::Loopback),
        ("http://[64:ff9b:1::a00:1]/", AddressClass::Reserved),
        ("http://[2002:7f00:1::1]/", AddressClass::Loopback),
        (
            "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            AddressClass::Reserved,
        ),
    ];
    for (url, class) in cases {
        assert_eq!(verdict(&strict(), url), Ok(class), "{url}");
        assert_eq!(verdict(&open(), url), Ok(AddressClass::Public), "{url}");
    }
}

#[test]
fn only_http_and_https_are_allowed() {
    for url in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,x",
        "ftp://example.com/",
        "ws://example.com/",
        "chrome://settings",
        "view-source:http://example.com/",
        "blob:http://example.com/uuid",
    ] {
        assert!(
            matches!(open().parse(url), Err(Refusal::Scheme(_))),
            "{url}: {:?}",
            open().parse(url)
        );
    }
}

#[test]
fn malformed_urls_are_refused_with_the_reason() {
    for url in [
        "",
        "not a url",
        "http://",
        "http://[::1/",
        "http://exa mple.com/",
    ] {
        let err = strict().parse(url).unwrap_err();
        assert!(matches!(err, Refusal::BadUrl { .. }), "{url}: {err}");
    }
}

#[test]
fn allowed_hosts_exempt_one_host_in_any_spelling() {
    let policy = Policy {
        allowed_hosts: vec!["Wiki.LAN.".into(), "10.0.0.7".into(), "[fd00::7]".into()],
        ..Policy::default()
    };
    let ip: IpAddr = "10.1.1.1".parse().unwrap();
    assert!(policy.check_ip("wiki.lan", ip).is_ok());
    assert!(policy.check_ip("WIKI.LAN.", ip).is_ok());
    assert!(policy.check_ip("other.lan", ip).is_err());
    assert!(policy.parse("http://10.0.0.7/").is_ok());
    assert!(policy.parse("http://10.0.0.8/").is_err());
    assert!(policy.parse("http://[fd00::7]/").is_ok());
}

#[test]
fn refusal_messages_name_the_host_address_and_class() {
    let err = strict()
        .parse("http://127.0.0.1:9/")
        .unwrap_err()
        .to_string();
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(err.contains("private or internal"), "{err}");
    assert!(err.contains("loopback"), "{err}");
    assert!(err.contains("allow_private_networks"), "{err}");
    let err = open()
        .parse("http://[fd00:ec2::254]/")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cloud metadata"), "{err}");
}

#[test]
fn resolution_judges_every_address() {
    let url = url::Url::parse("http://localhost:1/").unwrap();
    assert!(matches!(
        strict().resolve(&url),
        Err(Refusal::Internal { .. })
    ));
    let addrs = open().resolve(&url).unwrap();
    assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    let literal = url::Url::parse("http://127.0.0.1:5/").unwrap();
    assert_eq!(open().resolve(&literal).unwrap()[0].port(), 5);
    assert!(strict().resolve(&literal).is_err());
}

#[test]
fn an_unresolvable_name_is_refused() {
    let url = url::Url::parse("http://no-such-host.invalid/").unwrap();
    assert!(matches!(
        strict().resolve(&url),
        Err(Refusal::Unresolvable { .. })
    ));
}

#[test]
fn no_addresses_at_all_is_a_refusal() {
    assert!(matches!(
        open().check_addrs("x", &[]),
        Err(Refusal::Unresolvable { .. })
    ));
}

#[tokio::test(flavor = "current_thread")]
async fn the_reqwest_resolver_refuses_internal_answers() {
    use reqwest::dns::Resolve;
    use std::str::FromStr;
    let resolver = crate::PolicyResolver(std::sync::Arc::new(strict()));
    let name = reqwest::dns::Name::from_str("localhost").unwrap();
    let err = match resolver.resolve(name).await {
        Ok(_) => panic!("localhost resolved under the strict policy"),
        Err(err) => err,
    };
    assert!(err.downcast_ref::<Refusal>().is_some(), "{err}");
    let open = crate::PolicyResolver(std::sync::Arc::new(open()));
    let name = reqwest::dns::Name::from_str("localhost").unwrap();
    let addrs: Vec<_> = match open.resolve(name).await {
        Ok(addrs) => addrs.collect(),
        Err(err) => panic!("{err}"),
    };
    assert!(!addrs.is_empty());
}

proptest! {
    #[test]
    fn any_string_is_judged_without_panicking(raw in ".{0,80}") {
        let _ = strict().parse(&raw);
        let _ = open().parse(&raw);
    }

    #[test]
    fn any_http_url_like_string_is_judged_without_panicking(
        host in "[a-zA-Z0-9.:\\[\\]@%_-]{0,40}",
        path in "[ -~]{0,20}",
    ) {
        let _ = strict().parse(&format!("http://{host}/{path}"));
    }

    #[test]
    fn every_ipv6_literal_is_classified_like_its_address(bits in any::<u128>()) {
        let ip = std::net::Ipv6Addr::from(bits);
        let url = format!("http://[{ip}]/");
        let by_url = strict().parse(&url).is_ok();
        let by_ip = crate::classify(IpAddr::V6(ip)) == AddressClass::Public;
        prop_assert_eq!(by_url, by_ip, "{}", url);
    }

    #[test]
    fn every_ipv4_integer_spelling_matches_its_dotted_form(bits in any::<u32>()) {
        let ip = std::net::Ipv4Addr::from(bits);
        let dotted = strict().parse(&format!("http://{ip}/")).is_ok();
        let decimal = strict().parse(&format!("http://{bits}/")).is_ok();
        let hex = strict().parse(&format!("http://{bits:#x}/")).is_ok();
        prop_assert_eq!(dotted, decimal);
        prop_assert_eq!(dotted, hex);
    }
}
