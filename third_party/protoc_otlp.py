#!/usr/bin/env python3
"""Runs protoc-c on the OTLP .proto files and writes the generated C flat
into one folder (meson's outputs cannot name subfolders), each include of
another generated header rewritten to its flat name:
protoc_otlp.py PROTOC_C PROTO_ROOT OUTDIR."""
import os
import re
import subprocess
import sys
import tempfile

protoc, root, outdir = sys.argv[1:4]
protos = sorted(os.path.relpath(os.path.join(d, f), root)
                for d, _, fs in os.walk(root) for f in fs if f.endswith(".proto"))
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([protoc, f"--proto_path={root}", f"--c_out={tmp}", *protos], check=True)
    for p in protos:
        stem = p[:-len(".proto")]
        flat = "otlp_" + os.path.basename(stem)
        for ext in (".pb-c.c", ".pb-c.h"):
            with open(os.path.join(tmp, stem + ext), encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r'#include "opentelemetry/proto/(?:[a-z_]+/)*v1/([a-z_]+)\.pb-c\.h"',
                          r'#include "otlp_\1.pb-c.h"', text)
            with open(os.path.join(outdir, flat + ext), "w", encoding="utf-8") as f:
                f.write(text)
