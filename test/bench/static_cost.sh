#!/usr/bin/env bash
# The static build's costs beside the normal build's: the file's size, the
# first use's unpack into the cache (a fresh HOME each run, against the same
# runs with the cache in place), and `prof run -- true`, parse included,
# static (cache in place) and normal, the builds interleaved run after run.
# Usage: test/bench/static_cost.sh STATIC_BUILD NORMAL_BUILD [RUNS]
set -euo pipefail
static=$1/bin/prof
normal=$2/bin/prof
runs=${3:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ms() { # runs a command, prints its wall time in microseconds
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}
median() {
	local s
	s=($(printf '%s\n' "$@" | sort -n))
	printf '%.1f' "$(echo "${s[$((${#s[@]} / 2))]} / 1000" | bc -l)"
}

strip -o "$work/stripped" "$static"
printf 'static prof: %d bytes (%d stripped); embedded: %s\n' "$(stat -c %s "$static")" \
	"$(stat -c %s "$work/stripped")" "$("$static" --version | sed -n 's/^embedded: .*; \([0-9]* bytes\).*/\1/p')"

cold=() warm=() stat_t=() norm_t=()
for i in $(seq "$runs"); do
	home=$work/home$i
	mkdir -p "$home"
	cold+=($(ms env HOME="$home" "$static" run -o "$work/out" -- true))
	warm+=($(ms env HOME="$home" "$static" run -o "$work/out" -- true))
	stat_t+=($(ms env HOME="$home" "$static" run -o "$work/out" -- true))
	norm_t+=($(ms "$normal" run -o "$work/out" -- true))
	rm -rf "$home" "${work:?}/out"
done
c=$(median "${cold[@]}")
w=$(median "${warm[@]}")
printf 'first use (unpack + prof run -- true): median %s ms; cache in place: %s ms; unpack: %.1f ms (%d runs)\n' \
	"$c" "$w" "$(echo "$c - $w" | bc -l)" "$runs"
printf 'prof run -- true, median: static %s ms, normal %s ms (%d runs, interleaved)\n' \
	"$(median "${stat_t[@]}")" "$(median "${norm_t[@]}")" "$runs"
