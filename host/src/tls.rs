//! TLS for toolhost's HTTP clients (the model API, MCP servers over HTTP): rustls with
//! the ring provider. reqwest is built without a default provider — its own choice,
//! aws-lc-rs, brings aws-lc-sys and a C build that dominated a clean build
//! (BENCHMARKS.md, "Build") — so whoever builds a client installs ring first.

/// A reqwest client builder, ring installed as the process's TLS provider.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_ring_provider();
    reqwest::Client::builder()
}

/// Make rustls' ring provider the process default unless one is set already.
pub fn install_ring_provider() {
    // An error only says a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_builds_with_the_ring_provider() {
        assert!(client_builder().build().is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
