//! Nacos with authentication on (rnacos, `RNACOS_ENABLE_OPEN_API_AUTH=true`): the URL's user name and
//! password log rudder in (the naming stream's `accessToken`, the config centre's HTTP calls), and a
//! wrong password is a clear error that never prints the password. Skipped only with
//! `RUDDER_SKIP_NACOS=1`.

use std::sync::Arc;
use std::time::Duration;

use nacos_sdk::api::naming::{NamingServiceBuilder, ServiceInstance};
use nacos_sdk::api::props::ClientProps;
use rudder_cluster::directory::Directory;
use rudder_it::Rnacos;
use rudder_registry::{ConsumerSpec, RegistryOptions};

use crate::common;

const USER: &str = "rudder";
const PASSWORD: &str = "s3cret-Pw-41";

fn provider() -> ServiceInstance {
    let mut instance = ServiceInstance {
        ip: "10.0.0.7".to_owned(),
        port: 20880,
        ..ServiceInstance::default()
    };
    for (k, v) in [
        ("protocol", "dubbo"),
        ("path", "com.acme.Secured"),
        ("interface", "com.acme.Secured"),
        ("side", "provider"),
        ("category", "providers"),
    ] {
        instance.metadata.insert(k.to_owned(), v.to_owned());
    }
    instance
}

#[tokio::test]
async fn the_url_s_credentials_log_in_and_a_wrong_password_is_a_clear_error() {
    let env = format!(
        "RNACOS_ENABLE_OPEN_API_AUTH=true\nRNACOS_INIT_ADMIN_USERNAME={USER}\nRNACOS_INIT_ADMIN_PASSWORD={PASSWORD}\n"
    );
    let Some(nacos) = Rnacos::start_with_env(&env).await else {
        return;
    };
    // A provider registers as Dubbo's does, logged in.
    let props = ClientProps::new()
        .server_addr(nacos.address())
        .env_first(false)
        .auth_username(USER)
        .auth_password(PASSWORD);
    let registered = async {
        loop {
            if let Ok(naming) = NamingServiceBuilder::new(props.clone())
                .enable_auth_plugin_http()
                .build()
                .await
            {
                let service = "providers:com.acme.Secured::".to_owned();
                if naming
                    .register_instance(service, None, provider())
                    .await
                    .is_ok()
                {
                    return naming;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let _naming = tokio::time::timeout(common::WAIT, registered)
        .await
        .expect("the provider registers with its credentials");

    let address = nacos.address();
    let url = format!("nacos://{USER}:{PASSWORD}@{address}");
    let registry = rudder_registry::connect(&url, RegistryOptions::default(), None)
        .await
        .expect("logged in");
    let subscription = registry
        .subscribe(
            ConsumerSpec::new("com.acme.Secured"),
            Arc::new(Directory::default()) as _,
            None,
        )
        .await
        .expect("subscribed");
    subscription
        .wait_for(common::WAIT, |s| s.providers == 1)
        .await
        .expect("the provider, read with the token");
    subscription.close().await;
    registry.close().await;

    let wrong = format!("nacos://{address}?username={USER}&password=not-the-password&timeout=3000");
    let error = match rudder_registry::connect(&wrong, RegistryOptions::default(), None).await {
        Ok(registry) => {
            let outcome = registry
                .subscribe(
                    ConsumerSpec::new("com.acme.Secured"),
                    Arc::new(Directory::default()) as _,
                    None,
                )
                .await;
            registry.close().await;
            outcome.expect_err("a wrong password is refused")
        }
        Err(error) => error,
    };
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    println!("nacos_auth: wrong password: {text}");
    assert!(!text.contains("not-the-password"), "{text}");
    assert!(
        text.contains("check username and password"),
        "the error says why: {text}"
    );
}
