//! TLS for the plugin's HTTP clients: rustls with the ring provider. reqwest is built
//! without a default provider (its own, aws-lc-rs, brings a long C build), so every client
//! is built here, after ring is installed as this library's process default.

use reqwest::blocking::ClientBuilder;

/// A blocking reqwest client builder, ring installed first.
pub fn client_builder() -> ClientBuilder {
    // An error only says a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
}
