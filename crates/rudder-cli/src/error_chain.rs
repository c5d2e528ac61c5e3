//! How the CLI prints a failed call after its kind: `message: cause: cause`, each part once.

use rudder_common::error::RpcError;

/// Whether a provider's status answer in `error`'s causes says `text` (anywhere in its whole message,
/// not only the headline the chain prints).
pub(crate) fn provider_said(error: &RpcError, text: &str) -> bool {
    std::iter::successors(std::error::Error::source(error), |&cause| cause.source())
        .filter_map(|cause| cause.downcast_ref::<rudder::ProviderError>())
        .any(|status| status.message().contains(text))
}

/// `message: cause: cause ...`: what `error: <kind>:` and `call N failed: <kind>:` lines print after
/// the kind. rudder's errors say their own part and give their cause as `source()`, so walking the
/// chain prints every part once; an inner [`RpcError`] (the call a cluster mode retried) is printed
/// by its message only, as its kind is the one already shown.
///
/// Two guards are for the transport's errors, whose `Display` may repeat their cause: a
/// `tonic::Status` is skipped for its source (a tri:// message already says the status and its
/// message; tonic's `Display` adds its source in debug form), and a cause whose text the line
/// already holds is not printed again.
pub(crate) fn chain_text(error: &RpcError) -> String {
    let mut text = error.message().to_owned();
    let mut cause = std::error::Error::source(error);
    while let Some(link) = cause {
        cause = link.source();
        let part = match link.downcast_ref::<RpcError>() {
            Some(rpc) => rpc.message().to_owned(),
            None if link.is::<tonic::Status>() => continue,
            None => link.to_string(),
        };
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder::{ProviderError, ResponseStatus};
    use rudder_common::error::RpcErrorKind;

    fn status_answer(message: &str) -> RpcError {
        let status = ProviderError::new(ResponseStatus::BadRequest, message);
        let call = RpcError::new(RpcErrorKind::Serialization, "10.0.0.1:20880").with_source(status);
        RpcError::new(RpcErrorKind::Serialization, "failed after 1 attempt").with_source(call)
    }

    #[test]
    fn each_cause_is_printed_once_after_the_message() {
        let error = status_answer("Fail to decode request due to: x");
        let text = chain_text(&error);
        assert_eq!(
            text,
            "failed after 1 attempt: 10.0.0.1:20880: provider answered 40 BAD_REQUEST: \
             Fail to decode request due to: x"
        );
        assert!(provider_said(&error, "Fail to decode request"));
        assert!(!provider_said(&error, "Not found"));
        let io = std::io::Error::other("connection refused");
        let refused = RpcError::new(RpcErrorKind::Network, "connect to a:1 failed").with_source(io);
        assert_eq!(
            chain_text(&refused),
            "connect to a:1 failed: connection refused"
        );
    }

    /// tonic's `Display` of a status repeats the status's own source; the tri:// message already says
    /// the status, so the chain goes from the message to the status's source, printed unless the
    /// message already says it.
    #[test]
    fn a_grpc_status_is_skipped_for_its_source() {
        let io = std::io::Error::other("tcp connect error");
        let status = tonic::Status::from_error(Box::new(io));
        let said = "tri://a:1 S.m: grpc-status 2 Unknown: tcp connect error";
        let error = RpcError::new(RpcErrorKind::Network, said).with_source(status);
        assert_eq!(chain_text(&error), said);
        let quiet = tonic::Status::from_error(Box::new(std::io::Error::other("refused")));
        let error = RpcError::new(RpcErrorKind::Network, "tri://a:1").with_source(quiet);
        assert_eq!(chain_text(&error), "tri://a:1: refused");
    }
}
