#!/usr/bin/env python3
"""Install the build into a temporary DESTDIR, then build tests/consumer.c the way an outside project would,
with `pkg-config --cflags --libs hk`, and run it against the installed library.
Usage: link_pkgconfig.py MESON BUILD_DIR CONSUMER_C CC SANITIZE"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    print("+", " ".join(shlex.quote(c) for c in cmd), flush=True)
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(res.stdout)
    sys.stdout.write(res.stderr)
    if res.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {res.returncode}")
    return res.stdout


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    meson, build, consumer, cc, sanitize = sys.argv[1:]
    pkg_config = shutil.which("pkg-config")
    if not pkg_config:
        print("SKIP: pkg-config not found")
        return 77
    with tempfile.TemporaryDirectory(prefix="hk-install-") as dest:
        try:
            run(shlex.split(meson) + ["install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])
            pcs = [os.path.join(root, f) for root, _, files in os.walk(dest) for f in files if f == "hk.pc"]
            if len(pcs) != 1:
                raise RuntimeError(f"expected one installed hk.pc, found {pcs}")
            pcdir = os.path.dirname(pcs[0])
            libdir = os.path.dirname(pcdir)  # <prefix>/<libdir>/pkgconfig
            env = dict(os.environ, PKG_CONFIG_PATH=pcdir, PKG_CONFIG_SYSROOT_DIR=dest, PKG_CONFIG_LIBDIR=pcdir)
            flags = run([pkg_config, "--cflags", "--libs", "hk"], env=env).split()
            if not any(f.startswith("-I" + dest) for f in flags) or "-lhk" not in flags:
                raise RuntimeError(f"pkg-config flags {flags} do not point into the install")
            exe = os.path.join(dest, "consumer")
            extra = [] if sanitize in ("", "none") else [f"-fsanitize={sanitize}"]
            run(shlex.split(cc) + ["-std=c11", "-Wall", "-Werror", consumer, "-o", exe] + flags + extra + ["-lm"])
            # the installed library, not the build tree's, must satisfy the consumer
            run_env = dict(os.environ, LD_LIBRARY_PATH=libdir)
            ldd = shutil.which("ldd")
            if ldd:
                deps = run([ldd, exe], env=run_env)
                line = next((l for l in deps.splitlines() if "libhk.so" in l), "")
                if dest not in line:
                    raise RuntimeError(f"the consumer does not load the installed libhk ({line.strip()})")
            run([exe], env=run_env)
        except RuntimeError as e:
            print("FAIL:", e)
            print("0 passed, 1 failed")
            return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
