//! toolhost-netpolicy: which network addresses a tool may reach on the model's behalf.
//!
//! Every tool that fetches a URL the model chose (web_extract, vision_analyze's image
//! URLs, the browser's navigations and every request its pages make) is a way for a
//! prompt-injected page to reach the user's private network or the cloud metadata
//! service. This crate is the one place that decides: address classes
//! ([`AddressClass`], with the IPv6 forms that lead to IPv4 judged as their IPv4
//! address), metadata endpoints (refused always), URL and host-name checks
//! ([`Policy`]), and a DNS-pinning resolver for `reqwest` clients
//! ([`PolicyResolver`]). docs/hermes/web.md and docs/hermes/browser.md describe the
//! policy as the tools apply it.

mod class;
mod embedded;
mod metadata;
mod policy;
mod resolver;

pub use class::{AddressClass, classify};
pub use embedded::{Embedded, embedded_v4};
pub use metadata::{is_metadata_ip, is_metadata_name};
pub use policy::{Policy, Refusal, lookup, normalise_host};
pub use resolver::PolicyResolver;

#[cfg(test)]
mod class_tests;
#[cfg(test)]
mod policy_tests;
