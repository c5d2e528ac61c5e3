#!/usr/bin/env bash
# Starts a fresh ZooKeeper and several real providers (Java Dubbo 3.3, sofa-rpc-node) with
# different settings, then writes what they registered under
# /dubbo/org.rudder.it.GreetingService/providers to it/fixtures/provider-urls.txt and the
# whole /dubbo + /services tree to it/fixtures/zookeeper-tree.txt. Everything on 127.0.0.1.
#   scripts/peers/capture-provider-urls.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fixtures="$here/../../it/fixtures"
interface=org.rudder.it.GreetingService
# shellcheck source=lib.sh
source "$here/lib.sh"

"$here/build-java-provider.sh"
"$here/build-node-provider.sh"

start_zookeeper

java_release="$(sed -n 's:.*<dubbo.version>\(.*\)</dubbo.version>.*:\1:p' "$here/../../it/java-provider/pom.xml")"
: >"$work/descriptions.tsv"

start_peer java java-default "Java Dubbo $java_release, defaults: register-mode=all, no version/group/weight"
start_peer java java-v1-w200 "Java Dubbo $java_release, register-mode=all, version=1.0.0, weight=200" \
    RUDDER_VERSION=1.0.0 RUDDER_WEIGHT=200
start_peer java java-blue-warmup "Java Dubbo $java_release, register-mode=interface, group=blue, version=2.0.0, weight=50, warmup=60000" \
    RUDDER_REGISTER_MODE=interface RUDDER_GROUP=blue RUDDER_VERSION=2.0.0 RUDDER_WEIGHT=50 RUDDER_WARMUP=60000
start_peer node node-v1 "sofa-rpc-node 2.10.0 + dubbo-remoting 2.1.4, version=1.0.0, no group (group= empty), weight=100" \
    RUDDER_VERSION=1.0.0
start_peer node node-blue "sofa-rpc-node 2.10.0 + dubbo-remoting 2.1.4, version=2.0.0, group=blue, weight=50" \
    RUDDER_VERSION=2.0.0 RUDDER_GROUP=blue RUDDER_WEIGHT=50
for instance in java-default java-v1-w200 java-blue-warmup node-v1 node-blue; do
    wait_ready "$instance"
    echo "$instance ready after ${SECONDS}s" >&2
done

mkdir -p "$fixtures"
{
    echo "# Provider nodes that real peers registered under /dubbo/$interface/providers,"
    echo "# captured by scripts/peers/capture-provider-urls.sh on $(date -u +%Y-%m-%d) (ZooKeeper 3.8)."
    echo "# Each block: '# <which peer and settings>', 'encoded <znode name as stored>',"
    echo "# 'decoded <the same, percent-decoded once>'. Ports, pids and timestamps vary per run."
    echo "# Every provider adds rudder.instance=<name> so tests can tell who answered."
    echo
    "$here/zk-provider-urls.py" "$zk_port" "$interface" "$work/descriptions.tsv"
} >"$fixtures/provider-urls.txt"

{
    echo "# 'zkCli.sh ls -R' of /dubbo and /services with the providers of provider-urls.txt running,"
    echo "# captured by scripts/peers/capture-provider-urls.sh on $(date -u +%Y-%m-%d)."
    for root in /dubbo /services; do
        /usr/share/zookeeper/bin/zkCli.sh -server "127.0.0.1:$zk_port" ls -R "$root" 2>/dev/null | grep '^/'
    done
} >"$fixtures/zookeeper-tree.txt"

echo "wrote $fixtures/provider-urls.txt and $fixtures/zookeeper-tree.txt" >&2
