#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP proxy on 127.0.0.1 that adds a round-trip time, to benchmark backups at WAN latency.

Usage: delay_proxy.py LISTEN_PORT TARGET_PORT RTT_MS [INFLIGHT_MIB]

Every chunk is held RTT/2 in each direction, in order. At most INFLIGHT_MIB (default 6, the
largest receive buffer Linux TCP autotunes to by default, net.ipv4.tcp_rmem) are in flight per
direction: beyond it the proxy stops reading, as a real TCP connection is limited by its
window. The kernel of our build machines has no netem qdisc (`tc qdisc ... netem` answers
"Specified qdisc kind is unknown"; docs/benchmarks.md), hence user space. Runs until killed.
"""
import asyncio
import sys
import time


async def pump(reader, writer, delay, limit):
    queue = asyncio.Queue()
    in_flight = 0
    room = asyncio.Event()
    room.set()

    async def deliver():
        nonlocal in_flight
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            in_flight -= len(data)
            if in_flight < limit:
                room.set()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.ensure_future(deliver())
    try:
        while True:
            await room.wait()
            data = await reader.read(256 * 1024)
            if not data:
                break
            in_flight += len(data)
            if in_flight >= limit:
                room.clear()
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer, target_port, delay, limit):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pump(client_reader, server_writer, delay, limit),
                         pump(server_reader, client_writer, delay, limit))
    for w in (client_writer, server_writer):
        try:
            w.close()
        except OSError:
            pass


async def main():
    listen_port, target_port, rtt_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    limit = int(float(sys.argv[4]) * 1024 * 1024) if len(sys.argv) > 4 else 6 * 1024 * 1024
    delay = rtt_ms / 2000.0
    server = await asyncio.start_server(lambda r, w: handle(r, w, target_port, delay, limit), "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
