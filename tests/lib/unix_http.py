"""HTTP over a unix socket (the engine's, the server's, a relay's): the one
http.client connection every Python test and bench shares."""
import http.client
import socket


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.unix_path)


def read_to_eof(sock):
    """Everything sock sends until the peer closes it (a Connection: close reply)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
