#!/usr/bin/env bash
# Starts the Java Dubbo 3.3 GreetingService provider in the foreground (builds it first if needed).
# Settings come from the environment (or -D flags passed as arguments):
#   RUDDER_ZK_ADDRESS (127.0.0.1:2181)  RUDDER_DUBBO_PORT (20880)  RUDDER_INSTANCE (java-PORT)
#   RUDDER_WEIGHT  RUDDER_VERSION  RUDDER_GROUP  RUDDER_WARMUP (ms)  RUDDER_REGISTER_MODE (all)
# Prints "READY <url>" on stdout once registered; Dubbo's logs go to stderr.
# Set RUDDER_MAIN=org.rudder.it.ConsumerMain to run the consumer/benchmark instead.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="$here/../../it/java-provider"
"$here/build-java-provider.sh"

# Do NOT set DUBBO_IP_TO_REGISTRY/DUBBO_IP_TO_BIND to 127.0.0.1: Dubbo 3.3 rejects any 127.*
# value there. The provider keeps itself on loopback (LoopbackConfiguratorFactory).
unset DUBBO_IP_TO_REGISTRY DUBBO_IP_TO_BIND
# Start-up flags by default (C1 only, serial GC): ready in ~3 s on 2 cores. For benchmarks
# pass full-JIT flags instead, e.g. RUDDER_JAVA_OPTS="-Xmx512m".
read -r -a java_opts <<<"${RUDDER_JAVA_OPTS:--Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
exec java "${java_opts[@]}" "$@" \
    -cp "$(cat "$project/target/classpath.txt"):$project/target/rudder-it-java-provider.jar" \
    "${RUDDER_MAIN:-org.rudder.it.ProviderMain}"
