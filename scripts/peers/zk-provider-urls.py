#!/usr/bin/env python3
"""Lists the provider nodes of one interface through zkCli.sh and prints them as
fixture blocks: a comment naming the peer, the encoded node name, the decoded URL.

usage: zk-provider-urls.py ZK_PORT INTERFACE DESCRIPTIONS_FILE
DESCRIPTIONS_FILE holds "instance<TAB>description" lines; a node is matched to its
peer through the rudder.instance parameter every rudder test provider registers.
"""
import subprocess
import sys
from urllib.parse import parse_qs, unquote, urlsplit

ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"


def list_children(port, path):
    out = subprocess.run(
        [ZKCLI, "-server", f"127.0.0.1:{port}", "ls", path],
        check=True, capture_output=True, text=True,
    ).stdout
    # zkCli prints the children as "[a, b]" on the last non-empty line; node
    # names are URL-encoded so they never contain ", " themselves.
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    inner = line.strip()[1:-1]
    return [name for name in inner.split(", ") if name]


def main():
    port, interface, descriptions_file = sys.argv[1], sys.argv[2], sys.argv[3]
    descriptions = {}
    with open(descriptions_file) as handle:
        for line in handle:
            if line.strip():
                instance, description = line.rstrip("\n").split("\t", 1)
                descriptions[instance] = description
    path = f"/dubbo/{interface}/providers"
    blocks = []
    for encoded in list_children(port, path):
        decoded = unquote(encoded)
        instance = parse_qs(urlsplit(decoded).query).get("rudder.instance", ["?"])[0]
        blocks.append((descriptions.get(instance, "unknown peer"), encoded, decoded))
    blocks.sort()
    for description, encoded, decoded in blocks:
        print(f"# {description}")
        print(f"encoded {encoded}")
        print(f"decoded {decoded}")
        print()


if __name__ == "__main__":
    main()
