//! `cargo run -p rudder-examples --example grpc_greeter`: see `grpc_greeter.rs`.

#[tokio::main]
async fn main() {
    let outcome = rudder_examples::grpc_greeter::run(10).await;
    println!("{outcome:#?}");
}
