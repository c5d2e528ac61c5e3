//! Harness for rudder integration tests (ZooKeeper in testcontainers, real Dubbo peers).
