use super::*;

fn answer_with(kind: &str, body: serde_json::Value) -> Payload {
    Payload::new(kind, &body, HashMap::new())
}

/// Nacos's answer to a request on a connection it has not registered yet (`ErrorResponse`,
/// `NacosException.UN_REGISTER`).
fn unregistered() -> Payload {
    answer_with(
        "ErrorResponse",
        json!({"resultCode": 500, "errorCode": 301, "message": "Connection is unregistered."}),
    )
}

#[tokio::test(start_paused = true)]
async fn a_request_that_overtook_the_set_up_is_sent_again_until_registered() {
    let sent = std::cell::Cell::new(0);
    let started = tokio::time::Instant::now();
    let (answered, refused) = until_registered("SubscribeServiceResponse", || {
        sent.set(sent.get() + 1);
        let answer = if sent.get() < 3 {
            unregistered()
        } else {
            answer_with("SubscribeServiceResponse", json!({"resultCode": 200}))
        };
        async move { Ok(answer) }
    })
    .await
    .unwrap();
    assert_eq!(sent.get(), 3);
    assert!(refused.is_none());
    assert_eq!(answered.kind(), "SubscribeServiceResponse");
    assert_eq!(started.elapsed(), Duration::from_millis(100), "50 ms apart");

    // Never registered: the last answer's refusal, after the bounded tries.
    sent.set(0);
    let (_, refused) = until_registered("SubscribeServiceResponse", || {
        sent.set(sent.get() + 1);
        async { Ok(unregistered()) }
    })
    .await
    .unwrap();
    assert_eq!(sent.get(), NOT_REGISTERED_TRIES + 1);
    assert_eq!(refused.map(|r| r.code), Some(NOT_REGISTERED));

    // Any other refusal, or a failure to send, is the answer at once.
    sent.set(0);
    let (_, refused) = until_registered("QueryServiceResponse", || {
        sent.set(sent.get() + 1);
        async {
            Ok(answer_with(
                "ErrorResponse",
                json!({"resultCode": 500, "errorCode": 403, "message": "token expired!"}),
            ))
        }
    })
    .await
    .unwrap();
    assert_eq!((sent.get(), refused.map(|r| r.code)), (1, Some(403)));
    let failed = until_registered("QueryServiceResponse", || async {
        Err::<Payload, _>("no answer within 3000 ms".to_owned())
    })
    .await;
    assert_eq!(failed.unwrap_err(), "no answer within 3000 ms");
}

#[test]
fn after_a_reconnect_an_empty_list_waits_and_a_full_one_does_not() {
    let address = NacosAddress::parse("nacos://127.0.0.1:8848").unwrap();
    let stream = NamingStream::new(&address, RegistryOptions::default());
    let shared = &stream.shared;
    let (a, b): (Key, Key) = (("G".into(), "a".into()), ("G".into(), "b".into()));
    let (pa, pb) = (Arc::new(Pushes::default()), Arc::new(Pushes::default()));
    lock(&shared.subscribers).insert(a.clone(), vec![Arc::clone(&pa)]);
    lock(&shared.subscribers).insert(b.clone(), vec![Arc::clone(&pb)]);
    *lock(&shared.settling) = [(a.clone(), false), (b.clone(), false)].into();
    offer(shared, &a, HostList::default());
    offer(shared, &b, HostList::default());
    assert!(pa.take().is_none() && pb.take().is_none(), "held back");
    let one = HostList::of(json!([{"ip": "10.0.0.1"}]));
    offer(shared, &a, one);
    assert_eq!(pa.take().map(|l| l.len()), Some(1));
    // Settled: `a` applies everything from now on, `b`'s held empty list is handed over.
    settled(shared);
    assert_eq!(pb.take().map(|l| l.len()), Some(0));
    offer(shared, &a, HostList::default());
    assert_eq!(pa.take().map(|l| l.len()), Some(0));
}
