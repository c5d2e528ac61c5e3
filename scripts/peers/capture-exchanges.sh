#!/usr/bin/env bash
# Records real dubbo:// request/response frames: the Java Dubbo 3.3 consumer (ConsumerMain,
# call mode) calls the Java provider and the sofa-rpc-node provider through
# dubbo-capture-proxy.py, and every frame lands in it/fixtures/dubbo-exchanges.txt.
# Everything on 127.0.0.1.
#   scripts/peers/capture-exchanges.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/../../it/fixtures/dubbo-exchanges.txt"
# shellcheck source=lib.sh
source "$here/lib.sh"

"$here/build-java-provider.sh"
"$here/build-node-provider.sh"
start_zookeeper
java_release="$(sed -n 's:.*<dubbo.version>\(.*\)</dubbo.version>.*:\1:p' "$here/../../it/java-provider/pom.xml")"

start_peer java java-a "Java Dubbo $java_release provider" RUDDER_VERSION=1.0.0
start_peer node node-a "sofa-rpc-node 2.10.0 + dubbo-remoting 2.1.4 provider" RUDDER_VERSION=1.0.0
wait_ready java-a
wait_ready node-a

{
    echo "# Real dubbo:// frames (hessian2), captured by scripts/peers/capture-exchanges.sh on $(date -u +%Y-%m-%d)."
    echo "# Consumer: Java Dubbo $java_release (it/java-provider ConsumerMain, call mode, version=1.0.0),"
    echo "# direct URL through scripts/peers/dubbo-capture-proxy.py. Calls, in order:"
    echo "#   sayHello(\"rudder\"), add(2, 40), add(0, 0), echoUser(User{alice, 30, [a, b]}),"
    echo "#   nullValue(), fail(\"boom\") (throws GreetingException), slow(50)"
    echo "# Line format: <c2s|s2c> conn=<n> flags=<hex> status=<n> id=<signed i64> len=<body> <frame hex>"
} >"$out"

for instance in java-a node-a; do
    proxy_port="$("$here/free-port.py")"
    frames="$work/$instance.frames"
    "$here/dubbo-capture-proxy.py" "$proxy_port" "$(port_of "$instance")" "$frames" >"$work/proxy-$instance.out" &
    pids+=($!)
    until grep -q LISTENING "$work/proxy-$instance.out" 2>/dev/null; do sleep 0.1; done
    # The node provider fails nullValue and fail for a Java consumer, so ignore the exit code.
    RUDDER_MAIN=org.rudder.it.ConsumerMain RUDDER_URL="dubbo://127.0.0.1:$proxy_port" RUDDER_VERSION=1.0.0 \
        "$here/start-java-provider.sh" >"$work/consumer-$instance.out" 2>"$work/consumer-$instance.err" || true
    {
        echo
        echo "## provider: $(cut -f2 <<<"$(grep "^$instance	" "$work/descriptions.tsv")") ($instance)"
        echo "## what the Java consumer made of the answers:"
        sed 's/^/##   /' "$work/consumer-$instance.out" | cut -c1-200
        cat "$frames"
    } >>"$out"
done
echo "wrote $out" >&2
