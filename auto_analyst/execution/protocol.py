"""Framing of the messages between the caller, the state process and a run child.

A frame is ``[u64 total][u32 json_len][json][u64 blob_len][blob]...``. JSON carries everything
structured; blobs carry figure bytes so that a large plotly JSON or PNG is neither base64-encoded
nor escaped inside another JSON string. Nothing is ever pickled: the caller only parses JSON.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import time
from typing import Any

__all__ = ["ChannelClosed", "FrameTooLarge", "encode", "decode", "send", "recv", "recv_raw", "send_raw", "readable"]

# A run's result carries at most a few tables of max_table_rows rows plus figures; anything near
# this size is a script flooding us, and refusing it keeps the caller's memory bounded.
MAX_FRAME_BYTES = 512 * 1024 * 1024

_U64 = struct.Struct("!Q")
_U32 = struct.Struct("!I")
# Our own coder objects, made at import (before any script runs): a script that replaces
# ``json.dumps``/``json.loads`` in a worker that later serves the session does not change them.
class _Encoder(json.JSONEncoder):
    encode = json.JSONEncoder.encode  # own copies: patching json.JSONEncoder's methods does not reach these
    iterencode = json.JSONEncoder.iterencode


class _Decoder(json.JSONDecoder):
    decode = json.JSONDecoder.decode
    raw_decode = json.JSONDecoder.raw_decode


_ENCODER = _Encoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_DECODER = _Decoder()


class ChannelClosed(Exception):
    """The other end closed the connection or died (or a timeout expired while waiting for it)."""


class FrameTooLarge(Exception):
    """A frame announced more than MAX_FRAME_BYTES."""


def encode(obj: Any, blobs: list[bytes] | None = None) -> bytes:
    """One frame (header included) for a JSON-safe ``obj`` and optional binary ``blobs``."""
    body = _ENCODER.encode(obj).encode("utf-8")
    parts = [_U32.pack(len(body)), body]
    for blob in blobs or []:
        parts += [_U64.pack(len(blob)), blob]
    payload = b"".join(parts)
    return _U64.pack(len(payload)) + payload


def decode(payload: bytes) -> tuple[Any, list[bytes]]:
    """Split a frame's payload (without its 8-byte header) into (obj, blobs).

    Raises:
        ValueError: the bytes are not a well-formed frame (only a script writing to the channel makes those).
    """
    try:
        (jlen,) = _U32.unpack_from(payload, 0)
        if 4 + jlen > len(payload):
            raise ValueError("the JSON part runs past the frame")
        obj = _DECODER.decode(payload[4 : 4 + jlen].decode("utf-8"))
        blobs, pos = [], 4 + jlen
        while pos < len(payload):
            (blen,) = _U64.unpack_from(payload, pos)
            pos += 8
            if pos + blen > len(payload):
                raise ValueError("a blob runs past the frame")
            blobs.append(payload[pos : pos + blen])
            pos += blen
    except (struct.error, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"malformed frame: {e}") from None
    return obj, blobs


def readable(socks: list[socket.socket], timeout: float) -> list[socket.socket]:
    """The sockets among ``socks`` with data (or EOF) to read within ``timeout`` seconds.

    poll(), not select(): a busy server's descriptors can exceed select()'s limit of 1024.
    """
    poller = select.poll()
    by_fd = {}
    for s in socks:
        poller.register(s.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        by_fd[s.fileno()] = s
    return [by_fd[fd] for fd, _ in poller.poll(max(0.0, timeout) * 1000)]


def send_raw(sock: socket.socket, frame: bytes) -> None:
    """Send an already encoded frame. Raises ChannelClosed when the peer is gone."""
    try:
        sock.sendall(frame)
    except OSError as e:
        raise ChannelClosed(f"send failed: {e}") from None


def send(sock: socket.socket, obj: Any, blobs: list[bytes] | None = None) -> None:
    """Encode and send one frame. Raises ChannelClosed when the peer is gone."""
    send_raw(sock, encode(obj, blobs))


def _read_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not readable([sock], left):
                raise ChannelClosed("timed out waiting for the peer")
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except OSError as e:
            raise ChannelClosed(f"recv failed: {e}") from None
        if not chunk:
            raise ChannelClosed("peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv_raw(sock: socket.socket, timeout: float | None = None) -> bytes:
    """Receive one whole frame, header included (to relay it unparsed).

    Raises:
        ChannelClosed: the peer closed, or ``timeout`` seconds passed.
        FrameTooLarge: the peer announced an oversized frame.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    head = _read_exact(sock, 8, deadline)
    (size,) = _U64.unpack(head)
    if size > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"frame of {size} bytes exceeds {MAX_FRAME_BYTES}")
    return head + _read_exact(sock, size, deadline)


def recv(sock: socket.socket, timeout: float | None = None) -> tuple[Any, list[bytes]]:
    """Receive and decode one frame; see :func:`recv_raw` for the errors."""
    return decode(recv_raw(sock, timeout)[8:])
