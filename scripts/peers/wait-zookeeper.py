#!/usr/bin/env python3
"""Waits until the ZooKeeper on 127.0.0.1:PORT answers "ruok" with "imok".

usage: wait-zookeeper.py PORT [TIMEOUT_SECONDS]   (exit 0 when ready, 1 on timeout)
"""
import socket
import sys
import time

port = int(sys.argv[1])
deadline = time.monotonic() + float(sys.argv[2] if len(sys.argv) > 2 else 60)
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            if sock.recv(4) == b"imok":
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
print(f"ZooKeeper on 127.0.0.1:{port} not ready", file=sys.stderr)
sys.exit(1)
