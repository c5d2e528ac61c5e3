//! Provider URLs shaped like real registrations, for benches and tests that need many of them.

use rudder_common::url::DubboUrl;

/// The `i`-th of a set of distinct providers of `com.acme.Greeter` 1.0.0, shaped like a Dubbo 3.3
/// registration (10.x.y.z:20880, weights 100 to 106).
///
/// ```
/// let a = rudder_test_support::urls::greeter_provider(0);
/// let b = rudder_test_support::urls::greeter_provider(1);
/// assert_ne!(a.address(), b.address());
/// ```
pub fn greeter_provider(i: usize) -> DubboUrl {
    let text = format!(
        "dubbo://10.{}.{}.{}:20880/com.acme.Greeter?application=greeter-provider&deprecated=false&dubbo=2.0.2\
         &dynamic=true&generic=false&interface=com.acme.Greeter&methods=sayHello,sayBye&release=3.3.1\
         &service-name-mapping=true&side=provider&timestamp=1714144945493&version=1.0.0&weight={}",
        i / 65_536,
        (i / 256) % 256,
        i % 256,
        100 + i % 7
    );
    DubboUrl::parse(&text).expect("a well-formed provider URL")
}
