#!/bin/sh
# prof built for a GPU lease: installed under DEST (default .gpu, which git
# should ignore: add it to .git/info/exclude) with the shared libraries it
# needs beside it in DEST/lib/deps, found through its RUNPATH, because the
# device machine has none of Debian's -dev packages. Then, with DEST carried
# to the device machine:
#
#   sh test/gpu/device_check.sh DEST/bin/prof $OUT python3
#
#   test/gpu/prepare.sh [DEST]
set -eu
DEST=$(realpath -m "${1:-.gpu}")
cmake -S . -B build-gpu -DBUILD_TESTING=OFF -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib/deps' \
	-DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
grep -q "PROF_HAVE_CUDA:.*=ON\|CUPTI_INCLUDE_DIR:PATH=/" build-gpu/CMakeCache.txt ||
	{ echo "prepare.sh: no CUPTI headers found: the CUDA backend would be missing" >&2; exit 1; }
cmake --build build-gpu -j"$(nproc)" >/dev/null
cmake --install build-gpu --prefix "$DEST" >/dev/null
# a fresh deps/: ldd would otherwise find the copies there and cp them onto themselves
rm -rf "$DEST/lib/deps" && mkdir -p "$DEST/lib/deps"
# everything but glibc's own libraries, which the device machine has
ldd "$DEST/bin/prof" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
	grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
	while read -r lib; do cp -L "$lib" "$DEST/lib/deps/"; done
missing=$(env -u LD_LIBRARY_PATH ldd "$DEST/bin/prof" | grep -c "not found" || true)
echo "prepare.sh: $DEST: $(du -sh "$DEST" | cut -f1), $(ls "$DEST/lib/deps" | wc -l) libraries beside prof, $missing not found"
[ "$missing" = 0 ]
