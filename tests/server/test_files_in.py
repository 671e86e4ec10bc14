# SPDX-License-Identifier: MIT
"""PUT /control/files, the task's files as a tar over the host's stream: a
new door into the workspace, so every attack a tar can carry is sent and must
fail with one precise 422 while nothing appears outside the workspace and the
server keeps serving: absolute names, `..` (plain, in ustar's prefix, in a
pax path), symlinks and hardlinks (to outside and inside), devices, FIFOs,
GNU long names, a symlink planted in the workspace that a later name walks
through or lands on, base-256 and lying sizes, a bad checksum, truncation, a
flood of entries, an oversized pax header, a body over the server's cap. Then
the good cases: flat and nested files, a pax long name, atomic replacement,
an empty archive, and a tar from sandboxctl's own writer (the bytes the host
sends: Python's tarfile in the same USTAR/pax dialect)."""

import io
import json
import os
import stat
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import mcp_harness as h  # noqa: E402
from unix_http import UnixHTTP  # noqa: E402


def put(base, body, method="PUT"):
    c = UnixHTTP(base[len("unix:"):])
    c.request(method, "/control/files", body=body,
              headers={"Content-Type": "application/x-tar"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else None


def tar_of(*entries, fmt=tarfile.PAX_FORMAT):
    """entries: (TarInfo, bytes or None)."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return b.getvalue()


def entry(name, data=b"x", kind=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = link
    i.mode = 0o644
    return (i, data if kind == tarfile.REGTYPE else None)


def snapshot(root):
    out = set()
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def refused(base, body, want, outside, before):
    s, b = put(base, body)
    assert s == 422, (want, s, b)
    assert want in b["error"], (want, b)
    assert snapshot(outside) == before, (want, snapshot(outside) - before)


def attacks(base, ws, outside):
    before = snapshot(outside)
    rel_out = os.path.relpath(outside, ws)
    refused(base, tar_of(entry("/etc/evil")), "absolute", outside, before)
    refused(base, tar_of(entry(os.path.join(outside, "abs"))), "absolute", outside, before)
    refused(base, tar_of(entry("../" + os.path.basename(outside) + "/up")), "'..'",
            outside, before)
    refused(base, tar_of(entry("a/../../x")), "'..'", outside, before)
    # ustar's prefix field carries the `..` (a name over 100 bytes, USTAR format).
    refused(base, tar_of(entry("../" + "p" * 60 + "/" + "n" * 90), fmt=tarfile.USTAR_FORMAT),
            "'..'", outside, before)
    # A pax path (a long or non-ASCII name) with `..`.
    refused(base, tar_of(entry("../" + "\u00e9" * 10)), "'..'", outside, before)
    for kind, label in ((tarfile.SYMTYPE, "2"), (tarfile.LNKTYPE, "1"),
                        (tarfile.CHRTYPE, "3"), (tarfile.BLKTYPE, "4"),
                        (tarfile.FIFOTYPE, "6")):
        refused(base, tar_of(entry("link" + label, kind=kind, link=outside + "/t")),
                "type '%s'" % label, outside, before)
    refused(base, tar_of(entry("inlink", kind=tarfile.SYMTYPE, link="cash_flows.ods")),
            "type '2'", outside, before)
    # GNU long names ('L') are not ustar+pax: refused, not guessed at.
    refused(base, tar_of(entry("g" * 120), fmt=tarfile.GNU_FORMAT), "type 'L'", outside, before)
    # A symlink planted in the workspace (by an earlier writer): never followed,
    # neither as a directory on the way nor as the file itself.
    os.symlink(outside, os.path.join(ws, "planted"))
    refused(base, tar_of(entry("planted/through")), "planted", outside, before)
    refused(base, tar_of(entry("planted/", kind=tarfile.DIRTYPE)), "planted", outside, before)
    os.symlink(os.path.join(outside, "target"), os.path.join(ws, "dangling"))
    s, b = put(base, tar_of(entry("dangling", b"replaced")))
    assert s == 200, (s, b)  # the symlink itself is replaced, the target never written
    assert not os.path.islink(os.path.join(ws, "dangling")) and snapshot(outside) == before
    assert not os.path.exists(os.path.join(outside, "target"))
    # Framing: checksum, sizes, truncation, floods.
    good = tar_of(entry("f.txt", b"hello"))
    bad = bytearray(good)
    i = good.index(b"f.txt") // 512 * 512
    bad[i + 148:i + 156] = b"0000000\0"
    refused(base, bytes(bad), "bad header", outside, before)
    big = bytearray(good)
    big[i + 124:i + 136] = b"\x80" + b"\0" * 10 + b"\x05"  # base-256
    chk = sum(big[i:i + 148]) + 8 * 32 + sum(big[i + 156:i + 512])
    big[i + 148:i + 156] = b"%06o\0 " % chk
    refused(base, bytes(big), "not octal", outside, before)
    refused(base, good[:i + 512 + 3], "truncated", outside, before)
    refused(base, good[:i + 1024], "truncated", outside, before)
    lie = tarfile.TarInfo("lie")
    lie.pax_headers = {"size": "99999999999"}
    refused(base, tar_of((lie, b"1")), "truncated", outside, before)
    many = tar_of(*[entry("m%d" % k, b"") for k in range(4097)], fmt=tarfile.USTAR_FORMAT)
    refused(base, many, "more than 4096 entries", outside, before)
    refused(base, b"\x00" * 100, "no end-of-archive", outside, before)
    refused(base, b"A" * 1024, "not a tar", outside, before)
    pax = tarfile.TarInfo("p")
    pax.pax_headers = {"comment": "c" * 70000}
    refused(base, tar_of((pax, b"1")), "pax header over", outside, before)
    # Over the server's body cap: answered from the header, before a byte is read.
    c = UnixHTTP(base[len("unix:"):])
    c.putrequest("PUT", "/control/files")
    c.putheader("Content-Length", str(17 << 20))
    c.endheaders()
    r = c.getresponse()
    assert r.status == 413 and b"too large" in r.read(), r.status
    c.close()
    s, _ = put(base, good, method="POST")
    assert s == 405, s
    assert snapshot(outside) == before
    for n in ("planted", "dangling"):
        os.unlink(os.path.join(ws, n))
    print("attacks refused, nothing outside: ok (%s untouched)" % rel_out)


def good_cases(base, ws):
    files = [entry("a.txt", b"A" * 3000), entry("sub/dir/b.csv", b"1,2\n"),
             entry("./c.txt", b"c"), entry("d" * 150 + ".txt", b"long"),
             entry("r\u00e9sum\u00e9.txt", b"pax"), entry("empty", b"")]
    s, b = put(base, tar_of(entry("./", kind=tarfile.DIRTYPE), entry("sub/", kind=tarfile.DIRTYPE),
                            *files))
    assert s == 200 and b["files"] == 6 and b["bytes"] == 3000 + 4 + 1 + 4 + 3, (s, b)
    for name, data in (("a.txt", b"A" * 3000), ("sub/dir/b.csv", b"1,2\n"), ("c.txt", b"c"),
                       ("d" * 150 + ".txt", b"long"), ("r\u00e9sum\u00e9.txt", b"pax"),
                       ("empty", b"")):
        with open(os.path.join(ws, name), "rb") as f:
            assert f.read() == data, name
        st = os.stat(os.path.join(ws, name))
        assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID | 0o111), (name, oct(st.st_mode))
    s, b = put(base, tar_of(entry("a.txt", b"new")))
    assert s == 200 and open(os.path.join(ws, "a.txt"), "rb").read() == b"new", (s, b)
    assert not [n for n in os.listdir(ws) if ".tmp." in n]
    s, b = put(base, tar_of())
    assert s == 200 and b["files"] == 0, (s, b)
    # A directory in the way of a file: one error, the directory kept.
    s, b = put(base, tar_of(entry("sub", b"x")))
    assert s == 422 and "'sub'" in b["error"], (s, b)
    print("files, nested, long and pax names, replace, empty: ok")


def main():
    with h.workspace() as ws:
        outside = ws + ".outside"
        os.makedirs(outside)
        with open(os.path.join(outside, "keep"), "w") as f:
            f.write("keep")
        try:
            with h.http_server(ws, unix=ws + ".sock") as (base, proc):
                attacks(base, ws, outside)
                good_cases(base, ws)
                c = UnixHTTP(base[len("unix:"):])
                c.request("GET", "/health")
                assert c.getresponse().status == 200 and proc.poll() is None
                print("still serving: ok")
        finally:
            import shutil
            shutil.rmtree(outside, ignore_errors=True)


if __name__ == "__main__":
    main()
