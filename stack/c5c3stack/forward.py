"""A TCP relay from the node's Pod network to the API server (``python -m c5c3stack.forward``).

The API server binds 127.0.0.1 only (kube.py), which a pod in its own network namespace cannot reach; node.py
runs this as a Service listening on the Pod gateway (``PodNetwork`` in config.py, an address of the node's
bridge) at the API server's port, relaying every connection to ``127.0.0.1:<port>``. It relays bytes only: TLS
stays end to end (the API server's certificate names the gateway, certs.py), so the API server still
authenticates each pod by its token or certificate. Standard library only, so it runs in any of the stack's
Pythons.
"""
import argparse
import asyncio
import signal
import sys
from typing import Optional, Tuple

CHUNK = 64 * 1024
CONNECT_TIMEOUT = 10.0


def parse_address(text: str) -> Tuple[str, int]:
    """``HOST:PORT`` (an IPv4 literal) as a (host, port) tuple."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text!r}")
    return host, int(port)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until EOF, then half-close the other side, so a TLS close_notify and the last
    response still get through while the other direction runs on."""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError, RuntimeError):
            pass


async def _relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, target: Tuple[str, int]) -> None:
    try:
        upstream_r, upstream_w = await asyncio.wait_for(asyncio.open_connection(*target), CONNECT_TIMEOUT)
    except (OSError, asyncio.TimeoutError) as exc:  # the API server is down: the pod sees its connection closed
        print(f"{target[0]}:{target[1]}: {exc!r}", flush=True)
        client_w.close()
        return
    try:
        await asyncio.gather(_pump(client_r, upstream_w), _pump(upstream_r, client_w))
    finally:
        for w in (upstream_w, client_w):
            w.close()


async def start(listen: Tuple[str, int], target: Tuple[str, int]) -> asyncio.AbstractServer:
    """Listen on ``listen`` and relay each connection to ``target`` (used in-process by the unit tests)."""
    return await asyncio.start_server(lambda r, w: _relay(r, w, target), listen[0], listen[1],
                                      reuse_address=True)


async def _serve(listen: Tuple[str, int], target: Tuple[str, int]) -> None:
    server = await start(listen, target)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"relaying {listen[0]}:{listen[1]} -> {target[0]}:{target[1]}", flush=True)
    async with server:
        await stop.wait()


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="c5c3stack.forward", description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=parse_address, required=True, metavar="HOST:PORT")
    parser.add_argument("--to", type=parse_address, required=True, metavar="HOST:PORT")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.listen, args.to))
    return 0


if __name__ == "__main__":
    sys.exit(main())
