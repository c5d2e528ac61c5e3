#!/usr/bin/env bash
# Builds it/java-provider (Apache Dubbo 3.3 GreetingService provider + consumer, and the protobuf
# Greeter of proto/greeter.proto, whose Java messages protoc from Maven Central generates).
# Leaves it/java-provider/target/rudder-it-java-provider.jar and target/classpath.txt.
# Idempotent: does nothing when the jar is newer than the pom and every source.
# The first build downloads ~60 MB into ~/.m2; later builds work offline (mvn -o).
set -euo pipefail

project="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../it/java-provider" && pwd)"
jar="$project/target/rudder-it-java-provider.jar"
classpath="$project/target/classpath.txt"

if [[ -f "$jar" && -f "$classpath" ]] \
    && [[ -z "$(find "$project/pom.xml" "$project/src" "$project/../../proto" -newer "$jar" -print -quit)" ]]; then
    echo "java provider is up to date: $jar" >&2
    exit 0
fi

if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
    echo "installing maven and a JDK 17 (apt-get)" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q maven openjdk-17-jdk-headless >&2
fi

cd "$project"
offline=()
# After a first successful build every artifact is in ~/.m2: don't touch the network.
if [[ -f "$classpath" ]]; then
    offline=(-o)
fi
if ! mvn -q -B -Dstyle.color=never "${offline[@]}" package >&2; then
    if [[ ${#offline[@]} -gt 0 ]]; then
        echo "offline build failed; retrying online" >&2
        mvn -q -B -Dstyle.color=never package >&2
    else
        exit 1
    fi
fi
# The jar plugin may leave an unchanged jar's mtime alone; the check above needs it fresh.
touch "$jar"
echo "built $jar" >&2
