#!/usr/bin/env python3
"""Wheels for the GPU machine, in parts small enough to travel (the device takes at most 64 MiB
per call): used by scripts/fetch-device-wheels (``slim``, ``pack``) and scripts/bench-all
(``install``).

``slim WHEEL OUT PREFIX... [--keep-suffix SUFFIX...]``: rewrites WHEEL into OUT without the
members whose path starts with one of the prefixes (with --keep-suffix: also without every member
outside ``*.dist-info/`` whose name ends with none of the suffixes), and without their lines in
the wheel's RECORD (the wheel stays installable). OUT keeps WHEEL's file name when OUT is a
directory.

``pack SRC_DIR DEST_DIR --part-mb 40``: spreads the wheels of SRC_DIR over DEST_DIR/part1,
DEST_DIR/part2, ... (each at most --part-mb MB); a wheel bigger than a part is cut into chunks
``NAME.chunkKK-of-NN`` that land in consecutive parts. Every part gets MANIFEST.json (each
wheel's size, sha256 and chunk count), so any part says what the whole set is.

``install DEST_DIR TARGET``: gathers the wheels from whatever parts are present (joining a
chunked wheel only when all its chunks are there and its sha256 matches), installs them into
TARGET (``pip install --no-index --no-deps --target``, or by unzipping when pip is missing), and
prints which wheels are installed and which are incomplete. Installing again with the same set
does nothing.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def slim(wheel, out, prefixes, keep_suffix=None):
    """Copies `wheel` to `out` without the members under `prefixes`, or (keep_suffix) outside the
    dist-info with none of those suffixes, and without their RECORD lines."""
    if os.path.isdir(out):
        out = os.path.join(out, os.path.basename(wheel))

    def drop(name):
        if any(name.startswith(p) for p in prefixes):
            return True
        head = name.split("/", 1)[0]
        return bool(keep_suffix) and not head.endswith(".dist-info") and not name.endswith(tuple(keep_suffix))

    dropped = 0
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            name = info.filename
            if drop(name):
                dropped += info.file_size
                continue
            data = src.read(info)
            if name.endswith(".dist-info/RECORD"):
                lines = data.decode("utf-8").splitlines()
                kept = [l for l in lines if not drop(l.split(",", 1)[0])]
                data = ("\n".join(kept) + "\n").encode("utf-8")
            dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    print(f"slim: {os.path.basename(wheel)}: {dropped / 1e6:.1f} MB of members dropped "
          f"({os.path.getsize(wheel) / 1e6:.1f} -> {os.path.getsize(out) / 1e6:.1f} MB)")


def pack(src_dir, dest_dir, part_mb):
    """Spreads the wheels of src_dir over dest_dir/partK (first fit, biggest first)."""
    limit = int(part_mb * 1e6)
    wheels = sorted((f for f in os.listdir(src_dir) if f.endswith(".whl")),
                    key=lambda f: -os.path.getsize(os.path.join(src_dir, f)))
    manifest, pieces = {}, []  # pieces: (file name in the part, source path, offset, size)
    chunk = limit - (1 << 20)  # room for the manifest and the small wheels that fill a part
    for w in wheels:
        path = os.path.join(src_dir, w)
        size = os.path.getsize(path)
        count = 1 if size <= chunk else -(-size // chunk)
        manifest[w] = {"bytes": size, "sha256": sha256(path), "chunks": count}
        if count == 1:
            pieces.append((w, path, 0, size))
        else:
            for k in range(count):
                off = k * chunk
                pieces.append((f"{w}.chunk{k + 1:02d}-of-{count:02d}", path, off, min(chunk, size - off)))
    parts = []  # [used bytes, [pieces]]
    for piece in sorted(pieces, key=lambda p: -p[3]):
        for part in parts:
            if part[0] + piece[3] <= limit - (1 << 16):
                part[0] += piece[3]
                part[1].append(piece)
                break
        else:
            parts.append([piece[3], [piece]])
    if os.path.isdir(dest_dir):
        for entry in os.listdir(dest_dir):
            if entry.startswith("part"):
                shutil.rmtree(os.path.join(dest_dir, entry))
    for k, (used, members) in enumerate(parts, 1):
        d = os.path.join(dest_dir, f"part{k}")
        os.makedirs(d)
        for name, path, off, size in members:
            with open(path, "rb") as f, open(os.path.join(d, name), "wb") as g:
                f.seek(off)
                g.write(f.read(size))
        with open(os.path.join(d, "MANIFEST.json"), "w", encoding="utf-8") as f:
            json.dump({"parts": len(parts), "wheels": manifest}, f, indent=1)
        print(f"{d}: {used / 1e6:.1f} MB, {len(members)} files: " + ", ".join(sorted(m[0] for m in members)))


def install(dest_dir, target):
    """Installs what the present parts hold into `target`; returns 0 even when wheels are missing."""
    parts = sorted(e for e in os.listdir(dest_dir) if e.startswith("part")) if os.path.isdir(dest_dir) else []
    if not parts:
        print(f"wheels: no parts under {dest_dir}: nothing to install")
        return 0
    manifest, files = {}, {}
    for p in parts:
        d = os.path.join(dest_dir, p)
        for name in os.listdir(d):
            if name == "MANIFEST.json":
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    manifest.update(json.load(f)["wheels"])
            else:
                files[name] = os.path.join(d, name)
    stage = tempfile.mkdtemp(prefix="wheels-")
    ready, incomplete = [], []
    try:
        for wheel, info in sorted(manifest.items()):
            out = os.path.join(stage, wheel)
            if info["chunks"] == 1:
                names = [wheel]
            else:
                names = [f"{wheel}.chunk{k:02d}-of-{info['chunks']:02d}" for k in range(1, info["chunks"] + 1)]
            missing = [n for n in names if n not in files]
            if missing:
                incomplete.append(f"{wheel} (missing {', '.join(missing)})")
                continue
            with open(out, "wb") as g:
                for n in names:
                    with open(files[n], "rb") as f:
                        shutil.copyfileobj(f, g)
            if sha256(out) != info["sha256"]:
                incomplete.append(f"{wheel} (sha256 mismatch)")
                continue
            ready.append(wheel)
        for w in incomplete:
            print(f"wheels: incomplete: {w}")
        stamp = os.path.join(target, ".installed.json")
        if os.path.isfile(stamp):
            with open(stamp, encoding="utf-8") as f:
                if sorted(json.load(f)) == sorted(ready):
                    print(f"wheels: already installed in {target}: {', '.join(ready)}")
                    return 0
        if not ready:
            return 0
        if os.path.isdir(target):
            shutil.rmtree(target)
        os.makedirs(target)
        paths = [os.path.join(stage, w) for w in ready]
        pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, check=False)
        if pip.returncode == 0:
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                   "--disable-pip-version-check", "--target", target]
            if subprocess.run(cmd + paths, check=False).returncode != 0:
                # One wheel pip refuses (another Python, say) fails the batch: one by one instead.
                failed = [w for w, p in zip(ready, paths) if subprocess.run(cmd + [p], check=False).returncode != 0]
                for w in failed:
                    print(f"wheels: pip refused {w}")
                ready = [w for w in ready if w not in failed]
        else:  # no pip: a wheel is a zip of its install tree (purelib/platlib), enough for these
            print("wheels: pip is missing: unzipping the wheels instead")
            for p in paths:
                with zipfile.ZipFile(p) as z:
                    z.extractall(target)
        with open(stamp, "w", encoding="utf-8") as f:
            json.dump(ready, f)
        if len(ready) < len(manifest):
            os.remove(stamp)  # try again next time: another Python, or parts still to come
        print(f"wheels: installed into {target}: {', '.join(ready)}")
        return 0
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("slim")
    s.add_argument("wheel")
    s.add_argument("out")
    s.add_argument("prefixes", nargs="*")
    s.add_argument("--keep-suffix", nargs="+")
    p = sub.add_parser("pack")
    p.add_argument("src_dir")
    p.add_argument("dest_dir")
    p.add_argument("--part-mb", type=float, default=40.0)
    i = sub.add_parser("install")
    i.add_argument("dest_dir")
    i.add_argument("target")
    a = parser.parse_args()
    if a.cmd == "slim":
        slim(a.wheel, a.out, a.prefixes, a.keep_suffix)
        return 0
    if a.cmd == "pack":
        pack(a.src_dir, a.dest_dir, a.part_mb)
        return 0
    return install(a.dest_dir, a.target)


if __name__ == "__main__":
    sys.exit(main())
