#!/usr/bin/env python3
"""Serve a GGUF model over llama.cpp's OpenAI-compatible HTTP API (xllamacpp), for tests.

Usage: llm_test_server.py MODEL.gguf PORT [THREADS] [CTX]
Binds 127.0.0.1:PORT, prints "LISTENING <address>" once the server is up, then blocks until
killed (SIGTERM/SIGKILL). The caller polls GET /health. Requires `xllamacpp` (scripts/setup-test-env.sh).
"""
import signal
import sys
import threading

import xllamacpp as xlc


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    ctx = int(sys.argv[4]) if len(sys.argv) > 4 else 8192
    p = xlc.CommonParams()
    p.model.path = model
    p.hostnames = ["127.0.0.1"]
    p.port = port
    p.n_ctx = ctx
    p.n_parallel = 1
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.warmup = False
    p.endpoint_metrics = True
    server = xlc.Server(p)
    print("LISTENING", getattr(server, "listening_address", f"127.0.0.1:{port}"), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    del server


if __name__ == "__main__":
    main()
