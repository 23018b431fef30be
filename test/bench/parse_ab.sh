#!/usr/bin/env bash
# A/B of `prof parse` CPU between builds: the same run directory parsed by
# each build in turn, held to one core, the builds interleaved run after
# run so that the machine's drift (large on shared VMs: the same binary
# can move 10% in minutes) falls on all of them alike. Prints the median
# and the lowest CPU time of each build, and each build's median against
# the first's.
#
# Usage: test/bench/parse_ab.sh RUN_DIR RUNS BUILD_DIR...
#   RUN_DIR    a run to parse (test/bench/gen_raw makes one); its
#              PROFILER_OUTPUT is removed before every parse
#   RUNS       parses per build (7 or more: the median needs them)
#   BUILD_DIR  builds to compare (Release); BUILD_DIR/bin/prof is used
# CPU is perf stat's task-clock (every thread, user and kernel) when perf
# is installed, else user + sys from /usr/bin/time (10 ms steps).
set -euo pipefail

if [ $# -lt 3 ]; then
	sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
fi
run=$1 runs=$2
shift 2
[ -d "$run/raw" ] || { echo "parse_ab.sh: $run has no raw/ directory: not a run" >&2; exit 2; }
for b in "$@"; do
	[ -x "$b/bin/prof" ] || { echo "parse_ab.sh: $b/bin/prof is missing: build it first" >&2; exit 2; }
done
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
use_perf=0
perf stat -x, -e task-clock true >/dev/null 2>&1 && use_perf=1

# One parse's CPU in ms.
cpu_ms() {
	rm -rf "$run/PROFILER_OUTPUT"
	if [ $use_perf = 1 ]; then
		perf stat -x, -e task-clock "${pin[@]}" "$1/bin/prof" parse --quiet "$run" 2>&1 >/dev/null |
			awk -F, '/task-clock/ { printf "%d\n", $1 }'
	else
		local t
		t=$(mktemp)
		/usr/bin/time -o "$t" -f "%U %S" "${pin[@]}" "$1/bin/prof" parse --quiet "$run" \
			>/dev/null 2>&1 || true
		awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$t"
		rm -f "$t"
	fi
}

declare -A all
for _ in $(seq "$runs"); do
	for b in "$@"; do
		all[$b]+="$(cpu_ms "$b") "
	done
done
rm -rf "$run/PROFILER_OUTPUT"

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
lowest() { tr ' ' '\n' | sed '/^$/d' | sort -n | head -1; }
first=""
printf '%-40s %10s %10s %8s\n' build median_ms min_ms vs_first
for b in "$@"; do
	m=$(echo "${all[$b]}" | median)
	[ -n "$first" ] || first=$m
	printf '%-40s %10s %10s %+7.1f%%\n' "$b" "$m" "$(echo "${all[$b]}" | lowest)" \
		"$(awk -v a="$m" -v b="$first" 'BEGIN { print (a - b) * 100 / b }')"
done
echo "(CPU of one parse held to one core, $runs runs per build, interleaved;" \
	"$([ $use_perf = 1 ] && echo 'perf task-clock' || echo 'user + sys'))"
