#!/usr/bin/env bash
# Wall time of `prof run -- true`, the parse included: prof's fixed cost.
# Target: median <= 30 ms. Usage: test/bench/run_true.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-30}
prof="$build/bin/prof"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
times=()
for _ in $(seq "$runs"); do
	t0=$(date +%s%N)
	"$prof" run -o "$out" -- true 2>/dev/null
	t1=$(date +%s%N)
	times+=($(( (t1 - t0) / 1000 )))
	rm -rf "${out:?}"/*
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
n=${#sorted[@]}
printf 'prof run -- true: median %.1f ms, min %.1f ms, p90 %.1f ms (%d runs)\n' \
	"$(echo "${sorted[$((n / 2))]} / 1000" | bc -l)" \
	"$(echo "${sorted[0]} / 1000" | bc -l)" \
	"$(echo "${sorted[$((n * 9 / 10))]} / 1000" | bc -l)" "$n"
