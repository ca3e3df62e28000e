# Sourced by the device scripts (lab/device_run.sh, lab/device_check.sh): cmocka travels as .debs in .carry
# (`apt-get download libcmocka0 libcmocka-dev` on a Debian machine); unpack them aside and point pkg-config and
# the loader there. Also: unbuffered Python, $OUT (default /tmp/hk-out) and the build folder $B.
OUT=${OUT:-/tmp/hk-out}
mkdir -p "$OUT" /tmp/cm
export PYTHONUNBUFFERED=1
# A device call verifies: the sm_90a kernels not yet run on a GPU are on (docs/perf/tuning.md).
export HK_CUDA_UNVERIFIED=1
B=/tmp/hk-build
for f in .carry/*.deb; do dpkg -x "$f" /tmp/cm; done
export PKG_CONFIG_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/cm
export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
