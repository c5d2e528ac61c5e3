//! Running a few futures together on one task, without a task per future: the application watch asks
//! several MetadataServices at once, each call borrowing the watch's state.

/// Runs `futures` together on this task, each to its end; their outputs in order.
pub(crate) async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn join_all_runs_futures_together_and_keeps_their_order() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        // The first waits for the second: run one after another, this would never end.
        let first = async move { rx.await.unwrap() + 1 };
        let second = async move {
            tx.send(10).unwrap();
            0
        };
        let futures: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>>> =
            vec![Box::pin(first), Box::pin(second)];
        assert_eq!(join_all(futures).await, [11, 0]);
    }
}
