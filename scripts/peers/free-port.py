#!/usr/bin/env python3
"""Prints a TCP port that is free on 127.0.0.1 right now (the OS picks it)."""
import socket

with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1])
