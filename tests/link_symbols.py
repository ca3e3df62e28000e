#!/usr/bin/env python3
"""libhk.so exports exactly the hk_* functions that hk.h declares, each at version HK_1.0, and is named
libhk.so.1. Usage: link_symbols.py LIBHK_SO HK_H [NM]"""
import re
import shutil
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    lib, header = sys.argv[1], sys.argv[2]
    nm = sys.argv[3] if len(sys.argv) > 3 else shutil.which("nm")
    if not nm:
        print("SKIP: nm not found")
        return 77

    with open(header, encoding="utf-8") as f:
        declared = set(re.findall(r"\bHK_API\b[^;(]*?\b(hk_\w+)\s*\(", f.read()))
    if len(declared) < 30:
        print(f"FAIL: only {len(declared)} HK_API declarations found in {header}")
        return 1

    out = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    problems, exported = [], set()
    for line in out.splitlines():
        fields = line.split()
        if not fields:
            continue
        sym, kind = fields[-1], fields[-2] if len(fields) > 1 else "?"
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A" and name == "HK_1.0":
            continue  # the version node itself
        if not name.startswith("hk_"):
            problems.append(f"non-hk symbol exported: {sym}")
        elif version != "HK_1.0":
            problems.append(f"{name} is at version '{version}', want HK_1.0")
        if sym.endswith("@HK_1.0") and not sym.endswith("@@HK_1.0"):
            problems.append(f"{name} is not the default version: {sym}")
        exported.add(name)

    for name in sorted(declared - exported):
        problems.append(f"declared in hk.h but not exported: {name}")
    for name in sorted(exported - declared):
        if name.startswith("hk_"):
            problems.append(f"exported but not declared in hk.h: {name}")

    objdump = shutil.which("objdump")
    if objdump:
        dyn = subprocess.run([objdump, "-p", lib], capture_output=True, text=True, check=True).stdout
        soname = re.search(r"SONAME\s+(\S+)", dyn)
        if not soname or soname.group(1) != "libhk.so.1":
            problems.append(f"SONAME is {soname.group(1) if soname else 'missing'}, want libhk.so.1")

    for p in problems:
        print("FAIL:", p)
    print(f"{len(exported)} exported symbols, {len(declared)} declared")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
