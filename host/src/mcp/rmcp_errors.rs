//! Plain texts for rmcp's errors, which reach the model (a tool result saying why a
//! server is not connected or a call failed) and `toolhost mcp list`.
//!
//! rmcp's own `Display` can name its types: a transport error prints the transport's
//! full Rust type name (`Transport [rmcp::transport::worker::WorkerTransport<…>] error:
//! …`), an unexpected answer to `initialize` prints the message's `Debug` form, a
//! protocol-version mismatch the versions' `Debug` form, a timeout a chrono duration
//! (`PT30S`). These functions say what happened in words and keep what came from the
//! server or the network (its error message and code, the I/O or HTTP error). Everything
//! rmcp adds that is already plain text passes through unchanged.

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;

/// What went wrong in a transport: the transport's own error, without rmcp's wrapper.
pub fn transport_error(err: &DynamicTransportError) -> String {
    err.error.to_string()
}

/// Why the `initialize` handshake failed.
pub fn initialize_error(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::ExpectedInitResponse(_) => {
            "the server sent another message instead of its answer to initialize".into()
        }
        ClientInitializeError::ExpectedInitResult(_) => {
            "the server's answer to initialize is not an initialize result".into()
        }
        ClientInitializeError::TransportError { error, context } => {
            format!("could not {context}: {}", transport_error(error))
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server answered with error {data}")
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported,
            server_supported,
        } => format!(
            "no protocol version in common (toolhost speaks {}, the server {})",
            versions(client_supported),
            versions(server_supported)
        ),
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => format!(
            "{} (version discovery failed before: {})",
            initialize_error(fallback),
            initialize_error(discover)
        ),
        other => other.to_string(),
    }
}

/// Why a request to a connected server failed.
pub fn service_error(err: &ServiceError) -> String {
    match err {
        ServiceError::TransportSend(error) => {
            format!("could not send the request: {}", transport_error(error))
        }
        ServiceError::McpError(data) => format!("the server answered with error {data}"),
        ServiceError::Timeout { timeout } => {
            format!("no answer within {}s", timeout.as_secs_f64())
        }
        other => other.to_string(),
    }
}

fn versions(list: &[rmcp::model::ProtocolVersion]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion};

    use super::*;

    /// A transport error as rmcp builds one: named after the transport's Rust type.
    fn transport(message: &str) -> DynamicTransportError {
        DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<toolhost::mcp::http_client::SessionAwareClient>>",
            std::any::TypeId::of::<()>(),
            Box::new(std::io::Error::other(message.to_string())),
        )
    }

    /// True when `text` names a Rust type or shows a `Debug` form.
    fn names_rust_types(text: &str) -> bool {
        text.contains("::")
            || text.contains("Transport [")
            || text.contains("ProtocolVersion(")
            || text.contains("Some(")
            || text.contains("JsonRpc")
    }

    #[test]
    fn initialize_errors_are_plain_and_keep_what_came_from_outside() {
        let refused = ErrorData::new(ErrorCode(-32600), "bad client", None);
        let cases: Vec<(ClientInitializeError, &str)> = vec![
            (
                ClientInitializeError::TransportError {
                    error: transport("connection refused"),
                    context: "send initialize request".into(),
                },
                "could not send initialize request: connection refused",
            ),
            (
                ClientInitializeError::ExpectedInitResponse(None),
                "the server sent another message instead of its answer to initialize",
            ),
            (
                ClientInitializeError::ExpectedInitResult(None),
                "the server's answer to initialize is not an initialize result",
            ),
            (
                ClientInitializeError::JsonRpcError(refused.clone()),
                "the server answered with error -32600: bad client",
            ),
            (
                ClientInitializeError::NoCompatibleProtocolVersion {
                    client_supported: vec![ProtocolVersion::V_2025_06_18],
                    server_supported: vec![],
                },
                "no protocol version in common (toolhost speaks 2025-06-18, the server none)",
            ),
            (
                ClientInitializeError::LegacyFallbackFailed {
                    discover: Box::new(ClientInitializeError::JsonRpcError(refused)),
                    fallback: Box::new(ClientInitializeError::ConnectionClosed(
                        "initialize response".into(),
                    )),
                },
                "connection closed: initialize response (version discovery failed before: \
                 the server answered with error -32600: bad client)",
            ),
        ];
        for (err, want) in cases {
            let rmcp_text = err.to_string();
            let text = initialize_error(&err);
            assert_eq!(text, want, "rmcp said: {rmcp_text}");
            assert!(!names_rust_types(&text), "{text}");
        }
    }

    #[test]
    fn the_cases_replaced_are_the_ones_where_rmcp_names_its_types() {
        // If rmcp stops naming its types, these texts can go back to its own.
        let err = ClientInitializeError::TransportError {
            error: transport("connection refused"),
            context: "send initialize request".into(),
        };
        assert!(names_rust_types(&err.to_string()), "{err}");
        let err = ServiceError::TransportSend(transport("broken pipe"));
        assert!(names_rust_types(&err.to_string()), "{err}");
    }

    #[test]
    fn request_errors_are_plain_and_keep_what_came_from_outside() {
        let cases: Vec<(ServiceError, &str)> = vec![
            (
                ServiceError::TransportSend(transport("broken pipe")),
                "could not send the request: broken pipe",
            ),
            (
                ServiceError::McpError(ErrorData::new(ErrorCode(-32601), "Method not found", None)),
                "the server answered with error -32601: Method not found",
            ),
            (
                ServiceError::Timeout {
                    timeout: Duration::from_secs(30),
                },
                "no answer within 30s",
            ),
            (ServiceError::TransportClosed, "Transport closed"),
        ];
        for (err, want) in cases {
            let text = service_error(&err);
            assert_eq!(text, want, "rmcp said: {err}");
            assert!(!names_rust_types(&text), "{text}");
        }
    }
}
