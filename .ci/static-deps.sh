#!/bin/sh
# The libraries a static prof (-DPROF_STATIC=ON) links that Debian ships no
# usable static archive of, built from Debian's own source packages:
#   cJSON       Debian has no libcjson.a
#   libarchive  Debian's libarchive.a needs libxml2, ICU, nettle, acl, lzma,
#               lz4 and bz2 at link time; prof needs only tar, zip, gzip
#               (zlib) and zstd, so it is built with those alone
# Each source package is pinned by version and by the SHA-256 of each of its
# files, checked before anything is unpacked. SQLite, zlib and zstd come from
# Debian's libsqlite3-dev, zlib1g-dev and libzstd-dev (.ci/debian-packages.txt).
#
#   .ci/static-deps.sh PREFIX     installs PREFIX/include, PREFIX/lib/*.a
#
# CMake runs it at configure time for -DPROF_STATIC=ON (into
# <build>/static-deps); it does nothing when PREFIX/.done matches this
# script's pins. Needs curl, dpkg-source (dpkg-dev), cmake, a C compiler.
set -eu

prefix=${1:?usage: $0 PREFIX}
mirror=${PROF_DEBIAN_MIRROR:-http://deb.debian.org}

# package  version  pool path  then "sha256 file" for the .dsc and each file it lists
CJSON_VER=1.7.15-1+deb12u4
CJSON_POOL=debian/pool/main/c/cjson
CJSON_FILES="
764c2de141d680f4fb4cada30c526dacaa30ead061b9b9c34f2b81e2df0f8439 cjson_1.7.15-1+deb12u4.dsc
5308fd4bd90cef7aa060558514de6a1a4a0819974a26e6ed13973c5f624c24b2 cjson_1.7.15.orig.tar.gz
afd19a970966cf534ff1e9ec077d710a5e7e78eb4ec9b499c8bdc32e55da12cb cjson_1.7.15-1+deb12u4.debian.tar.xz"
LIBARCHIVE_VER=3.6.2-1+deb12u5
LIBARCHIVE_POOL=debian-security/pool/updates/main/liba/libarchive
LIBARCHIVE_FILES="
aa86e919d6899ed11cc78c812d25a99b0493cbcc0e89b303507bf66d7dbda216 libarchive_3.6.2-1+deb12u5.dsc
9e2c1b80d5fbe59b61308fdfab6c79b5021d7ff4ff2489fb12daf0a96a83551d libarchive_3.6.2.orig.tar.xz
5b32794076e9b0d8cd74fd2c453340b72c6362188f40fa1aac96304cb5683315 libarchive_3.6.2-1+deb12u5.debian.tar.xz"

stamp="cjson $CJSON_VER libarchive $LIBARCHIVE_VER"
if [ -f "$prefix/.done" ] && [ "$(cat "$prefix/.done")" = "$stamp" ]; then
	exit 0
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
work=$prefix/src
rm -rf "$work" "$prefix/include" "$prefix/lib" "$prefix/.done"
mkdir -p "$work" "$prefix/include/cjson" "$prefix/lib"
jobs=$(nproc 2>/dev/null || echo 2)

# fetch POOL "FILES": download each file and check its hash
fetch() {
	while read -r sum file; do
		[ -n "$file" ] || continue
		[ -f "$work/$file" ] || curl -fsSL -o "$work/$file" "$mirror/$1/$file"
		if ! echo "$sum  $work/$file" | sha256sum -c --quiet - >/dev/null 2>&1; then
			echo "static-deps: $file: SHA-256 differs from the pinned $sum" >&2
			exit 1
		fi
	done <<EOF
$2
EOF
}

# unpack DSC DIR: Debian's source tree, its patches applied; the hashes were
# checked above, and dpkg-source checks the files against the .dsc
unpack() {
	(cd "$work" && dpkg-source --no-check -x "$1" "$2" >/dev/null)
}

echo "static-deps: cJSON $CJSON_VER"
fetch "$CJSON_POOL" "$CJSON_FILES"
unpack "cjson_$CJSON_VER.dsc" cjson
${CC:-cc} -O2 -fPIC -std=c89 -c "$work/cjson/cJSON.c" -o "$work/cJSON.o"
ar rcs "$prefix/lib/libcjson.a" "$work/cJSON.o"
cp "$work/cjson/cJSON.h" "$prefix/include/cjson/"

echo "static-deps: libarchive $LIBARCHIVE_VER (tar, zip, gzip, zstd only)"
fetch "$LIBARCHIVE_POOL" "$LIBARCHIVE_FILES"
unpack "libarchive_$LIBARCHIVE_VER.dsc" libarchive
off=""
for o in OPENSSL MBEDTLS NETTLE LIBB2 LZ4 LZO LZMA BZip2 LIBXML2 EXPAT PCREPOSIX \
	LIBGCC CNG TAR CPIO CAT XATTR ACL ICONV TEST COVERAGE WERROR; do
	off="$off -DENABLE_$o=OFF"
done
# shellcheck disable=SC2086
if ! { cmake -S "$work/libarchive" -B "$work/libarchive-build" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DENABLE_ZLIB=ON -DENABLE_ZSTD=ON $off &&
	cmake --build "$work/libarchive-build" -j"$jobs" --target archive_static; } \
	>"$work/build.log" 2>&1; then
	tail -40 "$work/build.log" >&2
	echo "static-deps: building libarchive failed" >&2
	exit 1
fi
cp "$work/libarchive-build/libarchive/libarchive.a" "$prefix/lib/"
cp "$work/libarchive/libarchive/archive.h" "$work/libarchive/libarchive/archive_entry.h" \
	"$prefix/include/"

rm -rf "$work"
echo "$stamp" >"$prefix/.done"
echo "static-deps: done in $prefix"
