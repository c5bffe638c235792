"""Samples the RDMA rails' and the RDMA pair's tests share: perftest captures, a stand-in tool."""

from __future__ import annotations

from pathlib import Path

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "captures" / "perftest"
SAMPLE = CAPTURES / "write-bw-gbits-h200-cuda-dmabuf.txt"  # a real H200 ib_write_bw run
H200 = SAMPLE
FAILED = CAPTURES / "write-bw-gbits-host-completion-error.txt"
HCAS = ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7")

FAKE_TOOL = """#!/usr/bin/env python3
# A stand-in for ib_write_bw in this test: the server listens on -p and takes one client;
# the client connects to it (so it must be up first) and prints the real H200 sample.
import socket, sys
args = sys.argv[1:]
port = int(args[args.index("-p") + 1])
if args[-1] != "127.0.0.1":
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port)); server.listen(1)
    server.settimeout(20); conn, _ = server.accept(); conn.close()
    sys.exit(0)
socket.create_connection(("127.0.0.1", port), timeout=5).close()
hca = args[args.index("-d") + 1]
sys.stdout.write(open(sys.argv[0] + ".out").read().replace("mlx5_3", hca))
print("args:", " ".join(args))
"""
