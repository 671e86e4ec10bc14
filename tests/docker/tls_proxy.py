#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TLS front for the local engine, for testing DOCKER_HOST=tcp:// with TLS.

tls_proxy.py CERT_DIR UNIX_SOCKET: listens on 127.0.0.1 (a free port, printed
on stdout), requires a client certificate signed by CERT_DIR/ca.pem, and relays
each connection to the engine's unix socket. Like dockerd's own TLS listener
it reads the client's end of input (with or without close_notify) as a
half-close and keeps sending, so a hijacked exec stream can send EOF to the
process's stdin and still read the rest of its output.
"""
import os
import select
import socket
import ssl
import sys
import threading


def relay(client, sock_path):
    engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        engine.connect(sock_path)
    except OSError:
        client.close()
        return
    client_open, engine_open = True, True
    try:
        while engine_open:
            ready = [engine] + ([client] if client_open else [])
            if client_open and client.pending():
                readable = [client]
            else:
                readable, _, _ = select.select(ready, [], [], 60)
                if not readable:
                    break
            if client in readable:
                try:
                    data = client.recv(65536)
                except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionError):
                    data = b""
                except ssl.SSLWantReadError:
                    continue
                if data:
                    engine.sendall(data)
                else:
                    client_open = False
                    engine.shutdown(socket.SHUT_WR)
            if engine in readable:
                data = engine.recv(65536)
                if data:
                    client.sendall(data)
                else:
                    engine_open = False
    except (OSError, ssl.SSLError):
        pass
    finally:
        engine.close()
        try:
            client.close()
        except OSError:
            pass


def main(cert_dir, sock_path):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(cert_dir, "server-cert.pem"),
                        os.path.join(cert_dir, "server-key.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(os.path.join(cert_dir, "ca.pem"))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()
            continue
        threading.Thread(target=relay, args=(tls, sock_path), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
