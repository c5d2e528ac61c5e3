#!/usr/bin/env bash
# Runs a throwaway standalone ZooKeeper on 127.0.0.1:PORT in the foreground (no Docker).
#   scripts/peers/zookeeper.sh PORT [DATA_DIR]
# Installs Debian's zookeeper package when it is missing. DATA_DIR defaults to a
# fresh temporary directory (some peers leave persistent nodes behind). Logs go to
# stderr; "binding to port /127.0.0.1:PORT" then "Snapshotting" mean it is ready,
# as does `echo ruok | nc 127.0.0.1 PORT` answering imok.
set -euo pipefail

port="${1:?usage: zookeeper.sh PORT [DATA_DIR]}"
data_dir="${2:-$(mktemp -d /tmp/rudder-zk.XXXXXX)}"
jars=/usr/share/java

if [[ ! -f "$jars/zookeeper.jar" ]]; then
    echo "installing Debian's zookeeper package" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper >&2
fi

mkdir -p "$data_dir"
cat > "$data_dir/zoo.cfg" <<CFG
tickTime=2000
dataDir=$data_dir
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
maxSessionTimeout=60000
CFG

# Only the jars ZooKeeper needs: /usr/share/java/* holds several SLF4J bindings
# and SLF4J would then pick the no-op one and log nothing.
classpath=""
for jar in zookeeper zookeeper-jute netty-handler netty-common netty-buffer netty-transport \
    netty-codec netty-resolver netty-transport-native-epoll netty-transport-native-unix-common \
    slf4j-api slf4j-simple metrics-core commons-io snappy-java; do
    classpath="$classpath:$jars/$jar.jar"
done

exec java -Xmx256m -cp "${classpath#:}" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$data_dir/zoo.cfg"
