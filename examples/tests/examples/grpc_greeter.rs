//! The protobuf example: a tonic-generated client over `grpc_channel()` gets its answers, the
//! providers see the version header, and failover hides a stopped provider.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tonic_client_calls_through_the_cluster_and_fails_over() {
    let outcome = rudder_examples::grpc_greeter::run(10).await;
    assert_eq!(outcome.hello, "Hello rudder");
    assert_eq!(
        outcome.streamed,
        ["Hello stream #0", "Hello stream #1", "Hello stream #2"]
    );
    assert_eq!(
        outcome.streamed_undeclared,
        ["Hello plain #0", "Hello plain #1"]
    );
    assert_eq!(outcome.chatted, ["Hello one", "Hello two", "Hello three"]);
    assert_eq!(
        outcome.rejected,
        (tonic::Code::InvalidArgument, "a name, please".to_owned(), 1),
        "answered errors are not retried (failover's default retries=2)"
    );
    assert_eq!(
        outcome.counted,
        (2, 1),
        "statistics: 2 SayHello calls, 1 an exception"
    );
    assert_eq!(
        outcome.versions_seen.iter().collect::<Vec<_>>(),
        ["1.0.0"],
        "tri-service-version from the provider URL"
    );
    assert_eq!(
        outcome.served_before.len(),
        2,
        "round robin over both: {outcome:?}"
    );
    assert_eq!(outcome.failed_after, 0, "failover: {outcome:?}");
    assert!(
        !outcome.served_after.contains(&outcome.stopped),
        "{outcome:?}"
    );
    assert_eq!(outcome.served_after.len(), 1, "{outcome:?}");
}
