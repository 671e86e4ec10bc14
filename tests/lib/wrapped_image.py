# SPDX-License-Identifier: MIT
"""An image made from another by wrapping one of its programs: the program
moves to NAME.real beside itself and a script takes its place (an older
program's behaviour, or a spy on how it is run). Its labels stay the base's,
so sandboxctl takes it for the base's kind. Made through the engine's API
(create, archive, commit): no build, no docker CLI."""
import io
import json
import tarfile
import urllib.parse


def make(engine, base, ref, program, script):
    """Commits base with program (an absolute path) wrapped by script (bytes) as ref
    ("repo:tag"); AssertionError on any failure. Remove it with remove(engine, ref)."""
    js = {"Content-Type": "application/json"}
    st, c = engine("POST", "/containers/create",
                   json.dumps({"Image": base, "Labels": {"sandboxctl.test": "1"}}), headers=js)
    if st != 201:
        raise AssertionError("create on %s: %s %s" % (base, st, c))
    try:
        st, data = engine("GET", "/containers/%s/archive?path=%s" % (c["Id"], program))
        if st != 200:
            raise AssertionError("get %s: %s" % (program, st))
        src = tarfile.open(fileobj=io.BytesIO(data))
        member = src.getmembers()[0]
        name = member.name
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as t:
            real = src.extractfile(member).read()
            member.name = name + ".real"
            t.addfile(member, io.BytesIO(real))
            wrapper = tarfile.TarInfo(name)
            wrapper.size, wrapper.mode = len(script), 0o755
            t.addfile(wrapper, io.BytesIO(script))
        st, body = engine("PUT", "/containers/%s/archive?path=%s" %
                          (c["Id"], program.rsplit("/", 1)[0]), out.getvalue(),
                          headers={"Content-Type": "application/x-tar"})
        if st != 200:
            raise AssertionError("put the wrapper of %s: %s %s" % (program, st, body))
        repo, tag = ref.rsplit(":", 1)
        st, body = engine("POST", "/commit?container=%s&repo=%s&tag=%s" % (c["Id"], repo, tag))
        if st != 201:
            raise AssertionError("commit %s: %s %s" % (ref, st, body))
    finally:
        engine("DELETE", "/containers/%s?force=1" % c["Id"])


def remove(engine, ref):
    engine("DELETE", "/images/%s?force=1" % urllib.parse.quote(ref, safe=""))
