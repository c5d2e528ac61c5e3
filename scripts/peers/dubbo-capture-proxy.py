#!/usr/bin/env python3
"""A logging TCP proxy for dubbo:// traffic, on loopback only.

usage: dubbo-capture-proxy.py LISTEN_PORT TARGET_PORT OUT_FILE

Accepts connections on 127.0.0.1:LISTEN_PORT, forwards each to 127.0.0.1:TARGET_PORT,
and appends every complete dubbo frame it relays to OUT_FILE, one line per frame:
    <c2s|s2c> conn=<n> flags=<hex> status=<n> id=<n> len=<n> <header+body hex>
Bytes that do not start with the 0xdabb magic are logged as "raw" lines. Prints
"LISTENING <port>" on stdout once it accepts connections. Stops on SIGTERM/SIGINT.
"""
import asyncio
import signal
import struct
import sys

MAGIC = b"\xda\xbb"
HEADER_LEN = 16


class FrameLog:
    """Splits one direction's byte stream into dubbo frames and writes them out."""

    def __init__(self, out, direction, conn):
        self.out, self.direction, self.conn = out, direction, conn
        self.buffer = bytearray()

    def feed(self, data):
        self.buffer += data
        while len(self.buffer) >= 2:
            if self.buffer[:2] != MAGIC:
                self._write(f"raw {self.buffer.hex()}")
                self.buffer.clear()
                return
            if len(self.buffer) < HEADER_LEN:
                return
            flags, status, request_id, body_len = struct.unpack(">xxBBqi", self.buffer[:HEADER_LEN])
            end = HEADER_LEN + body_len
            if len(self.buffer) < end:
                return
            frame = bytes(self.buffer[:end])
            del self.buffer[:end]
            self._write(f"flags={flags:02x} status={status} id={request_id} len={body_len} {frame.hex()}")

    def _write(self, text):
        self.out.write(f"{self.direction} conn={self.conn} {text}\n")
        self.out.flush()


async def pump(reader, writer, log):
    try:
        while data := await reader.read(65536):
            log.feed(data)
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main():
    listen_port, target_port, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    out = open(out_path, "a", encoding="ascii")
    counter = 0

    async def handle(client_reader, client_writer):
        nonlocal counter
        counter += 1
        conn = counter
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(
            pump(client_reader, server_writer, FrameLog(out, "c2s", conn)),
            pump(server_reader, client_writer, FrameLog(out, "s2c", conn)),
        )

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    print(f"LISTENING {listen_port}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
