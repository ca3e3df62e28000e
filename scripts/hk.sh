#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root) or a prepared one:
#   scripts/hk.sh bench   install what is missing, build, run hk-info and hk-bench (best backend here)
#   scripts/hk.sh test    install what is missing, build, run the test suite, then again under ASan+UBSan, then
#                         each libFuzzer target of fuzz/ for HK_FUZZ_SECONDS (20) seconds from its seed corpus
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential meson ninja-build pkg-config python3 python3-numpy libcmocka-dev
          clang-22 lld-22 llvm-22 libclang-rt-22-dev libamdhip64-dev librocm-smi-dev
          python3-torch python3-pip) # CPU-only torch 1.13 for the Python tests (PyPI's pulls ~3 GB of CUDA)

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    if [ "$(id -u)" -ne 0 ]; then
        echo "hk.sh: missing packages (run as root to install): ${missing[*]}" >&2
        exit 1
    fi
    echo "hk.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# NumPy's bf16/fp8 dtypes for the Python tests come from PyPI's ml_dtypes (Debian 12 has none), installed into
# the Debian interpreter that runs meson and has python3-numpy; 0.5 is the last series that takes numpy 1.24.
install_ml_dtypes() {
    /usr/bin/python3 -c 'import ml_dtypes' 2>/dev/null && return
    [ "$(id -u)" -eq 0 ] || { echo "hk.sh: ml_dtypes missing (run as root to install)" >&2; exit 1; }
    /usr/bin/python3 -m pip install -q --root-user-action=ignore --break-system-packages 'ml_dtypes>=0.5,<0.6'
}

build() { # build DIR [meson options...]; the logs are kept, and shown when a step fails
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; echo "hk.sh: meson setup $dir failed" >&2; exit 1; }
    fi
    ninja -C "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; echo "hk.sh: the build in $dir failed" >&2; exit 1; }
}

# Reads meson's testlog.json files and prints passed/failed/skipped totals; exit 1 on any failure.
summarise() {
    python3 - "$@" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)['result']
        if r == 'OK': passed += 1
        elif r == 'SKIP': skipped += 1
        else: failed += 1
print(f'{passed} passed, {failed} failed, {skipped} skipped')
sys.exit(1 if failed else 0)
PY
}

case "${1:-}" in
bench)
    install_missing
    build build
    build/tools/hk-info
    echo
    build/tools/hk-bench "${@:2}"
    ;;
test)
    install_missing
    install_ml_dtypes
    build build
    status=0
    meson test -C build --print-errorlogs --num-processes 2 || status=1
    # Once more under AddressSanitizer + UndefinedBehaviorSanitizer (device code objects are not needed there:
    # the emulator runs the AMD kernel sources as host code). The link suite loads libhk into programs
    # that are not instrumented (python, dlopen), so it runs only in the plain build.
    build build-asan -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
        -Damd_kernels=disabled -Dnvidia_kernels=disabled
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
    meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite link --no-suite python || status=1
    # The fuzzers (fuzz/fuzz.h): a short fixed run of each, two at a time, from the seed corpus in the repo.
    CC=clang-22 CXX=clang++-22 build build-fuzz -Dfuzzers=true -Dtests=false -Dtools=false \
        -Damd_kernels=disabled -Dnvidia_kernels=disabled
    fuzz_log=build-fuzz/fuzz-results.log
    : >"$fuzz_log"
    scripts/fuzz.sh "${HK_FUZZ_SECONDS:-20}" build-fuzz >"$fuzz_log" 2>&1 || status=1
    cat "$fuzz_log"
    summarise build/meson-logs/testlog.json build-asan/meson-logs/testlog.json || status=1
    exit $status
    ;;
*)
    echo "usage: scripts/hk.sh bench|test" >&2
    exit 2
    ;;
esac
