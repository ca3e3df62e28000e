#!/usr/bin/env python3
"""The Python package's ctypes structs against the C compiler's layout of include/hk.h: every struct's size and
every field's offset and size, both ways (a field missing on either side fails). Usage: test_abi.py ABI_LAYOUT_EXE"""
import ctypes
import subprocess
import sys

import common  # noqa: F401  (puts the package on sys.path)
from hk import _abi


def main():
    c_side = {}
    for line in subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout.splitlines():
        key, value = line.rsplit(' ', 1)
        c_side[key] = int(value)
    py_side = {}
    for cname, cls in _abi.STRUCTS.items():
        py_side[f'{cname} size'] = ctypes.sizeof(cls)
        for name, _ in cls._fields_:
            py_side[f'{cname}.{name}'] = getattr(cls, name).offset
            py_side[f'{cname}.{name}.size'] = getattr(cls, name).size
    failures = 0
    for key in sorted(set(c_side) | set(py_side)):
        if c_side.get(key) != py_side.get(key):
            print(f'FAIL: {key}: C {c_side.get(key)}, ctypes {py_side.get(key)}')
            failures += 1
    passed = len(set(c_side) | set(py_side)) - failures
    print(f'{passed} passed, {failures} failed')
    return 1 if failures or not c_side else 0


if __name__ == '__main__':
    sys.exit(main())
