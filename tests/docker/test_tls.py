#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""DOCKER_HOST=tcp:// with TLS, end to end, through a loopback TLS front.

test_tls.py SANDBOXCTL TEST_DOCKER_INTEGRATION: makes a CA, a server
certificate for 127.0.0.1 and a client certificate with openssl, starts
tls_proxy.py, then runs the whole Docker integration test binary and
`sandboxctl doctor` over TLS; a client without the right CA must fail with
exit 3 and one line.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
            f"/CN={name}", "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", cwd=d)


def make_cert(d, name, ca, ext):
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(ext)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout",
            f"{name}-key.pem", "-out", f"{name}.csr", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem",
            "-CAcreateserial", "-days", "1", "-extfile", f"{name}.ext", "-out",
            f"{name}-cert.pem", cwd=d)


def cert_dir(root, client_ca):
    """A DOCKER_CERT_PATH: ca.pem (to verify the server), cert.pem + key.pem."""
    d = os.path.join(root, f"client-{client_ca}")
    os.mkdir(d)
    for src, dst in ((f"{client_ca}.pem", "ca.pem"), ("client-cert.pem", "cert.pem"),
                     ("client-key.pem", "key.pem")):
        with open(os.path.join(root, src), "rb") as i, open(os.path.join(d, dst), "wb") as o:
            o.write(i.read())
    return d


def main():
    sandboxctl, integration = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="sbx-tls-") as root:
        make_ca(root, "ca")
        make_ca(root, "otherca")
        make_cert(root, "server", "ca", "subjectAltName=IP:127.0.0.1\n"
                  "extendedKeyUsage=serverAuth\n")
        make_cert(root, "client", "ca", "extendedKeyUsage=clientAuth\n")
        proxy = subprocess.Popen([sys.executable, os.path.join(HERE, "tls_proxy.py"), root,
                                  "/var/run/docker.sock"], stdout=subprocess.PIPE, text=True)
        try:
            port = int(proxy.stdout.readline())
            env = dict(os.environ, DOCKER_HOST=f"tcp://127.0.0.1:{port}",
                       DOCKER_TLS_VERIFY="1", DOCKER_CERT_PATH=cert_dir(root, "ca"))

            r = subprocess.run([sandboxctl, "doctor", "--json"], env=env, capture_output=True,
                               text=True, timeout=60)
            doc = json.loads(r.stdout)
            if doc["engine"].get("host") != f"tcp://127.0.0.1:{port}" or \
                    not doc["engine"].get("api_version"):
                print(f"FAIL doctor over TLS: {r.stdout} {r.stderr}")
                failures += 1
            else:
                print(f"ok   doctor over TLS: API {doc['engine']['api_version']}")

            r = subprocess.run([integration], env=env, capture_output=True, text=True,
                               timeout=600)
            print(r.stdout, r.stderr, sep="")
            if r.returncode != 0:
                print("FAIL integration tests over TLS")
                failures += 1
            else:
                print("ok   integration tests over TLS")

            # A server certificate from a CA the client does not trust.
            bad = dict(env, DOCKER_CERT_PATH=cert_dir(root, "otherca"))
            t0 = time.monotonic()
            r = subprocess.run([sandboxctl, "doctor"], env=bad, capture_output=True, text=True,
                               timeout=60)
            lines = r.stderr.strip().splitlines()
            if r.returncode != 3 or len(lines) != 1 or "TLS" not in lines[0] or \
                    time.monotonic() - t0 > 5:
                print(f"FAIL untrusted server: exit {r.returncode}: {r.stderr!r}")
                failures += 1
            else:
                print(f"ok   untrusted server refused: {lines[0]}")
        finally:
            proxy.terminate()
            proxy.wait()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
