//! Where one service lives in ZooKeeper (Dubbo's interface-level layout, `ZookeeperRegistry.toCategoryPath`).

use rudder_common::url::java_url_encode;

/// The category nodes of one service: `<root>/<URL.encode(interface)>/<category>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServicePaths {
    pub(crate) providers: String,
    pub(crate) configurators: String,
    pub(crate) consumers: String,
}

impl ServicePaths {
    pub(crate) fn new(root: &str, interface: &str) -> ServicePaths {
        let service = format!("{root}/{}", java_url_encode(interface));
        ServicePaths {
            providers: format!("{service}/providers"),
            configurators: format!("{service}/configurators"),
            consumers: format!("{service}/consumers"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_is_url_encoded_under_the_root() {
        let p = ServicePaths::new("/dubbo", "com.acme.Greeter");
        assert_eq!(p.providers, "/dubbo/com.acme.Greeter/providers");
        assert_eq!(p.configurators, "/dubbo/com.acme.Greeter/configurators");
        let odd = ServicePaths::new("/x/dubbo", "a$b");
        assert_eq!(odd.consumers, "/x/dubbo/a%24b/consumers");
    }
}
