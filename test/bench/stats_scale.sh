#!/usr/bin/env bash
# How `prof stats` and `prof diff` scale with the run: synthetic runs of N
# and 4N events (test/bench/gen_raw, then `prof parse`), each view timed
# on both. The last column is time(4N) / time(N): about 4 where the work
# is linear (n log n a little more), 16 where it compares every row with
# every other. A view whose times are both under 0.05 s says little.
#
# Usage: test/bench/stats_scale.sh [BUILD_DIR] [N] [WORK_DIR]
#   BUILD_DIR  default build
#   N          events of the smaller run, default 500000 (the larger: 4N)
#   WORK_DIR   where the runs are generated, default $TMPDIR or /tmp
set -euo pipefail
build=${1:-build}
n=${2:-500000}
work=${3:-${TMPDIR:-/tmp}}
prof="$build/bin/prof"
gen="$build/test/bench/gen_raw"
for f in "$prof" "$gen"; do
	[ -x "$f" ] || { echo "missing $f (build first)" >&2; exit 1; }
done
dir=$(mktemp -d "$work/prof-stats-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

seconds() { # cmd...: wall seconds, the output dropped
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

# step_trace_time.csv of a long job: N/5 steps of two devices (the
# generated runs have a few hundred steps)
long_steps() { # run_dir steps
	awk -v steps="$2" 'NR == 1 { print; next } NR == 2 { row = $0; exit }
		END { n = split(row, f, ","); for (s = 1; s <= steps; s++) for (d = 0; d < 2; d++) {
			f[1] = d; f[2] = s; f[3] = sprintf("%.3f", 1000 + (s * 7919 + d * 104729) % 2000)
			line = f[1]; for (i = 2; i <= n; i++) line = line "," f[i]; print line } }' \
		"$1/PROFILER_OUTPUT/step_trace_time.csv" >"$1.steps" &&
		mv "$1.steps" "$1/PROFILER_OUTPUT/step_trace_time.csv"
}

for size in "$n" $((4 * n)); do
	"$gen" "$dir/r$size" "$size" >/dev/null
	"$prof" parse -q "$dir/r$size" 2>/dev/null || [ $? -eq 3 ] ||
		{ echo "parse of $size events failed" >&2; exit 1; }
	rows=$(cat "$dir/r$size"/PROFILER_OUTPUT/*.csv | wc -l)
	echo "run of $size events: $rows CSV rows"
done

for size in "$n" $((4 * n)); do
	cp -r "$dir/r$size" "$dir/s$size"
	long_steps "$dir/s$size" $((size / 5))
done

printf "%-22s %10s %10s %8s\n" "command" "N (s)" "4N (s)" "ratio"
for view in overview steps ops kernels api memory ranges flops all diff long-steps; do
	t=()
	for size in "$n" $((4 * n)); do
		run="$dir/r$size"
		if [ "$view" = long-steps ]; then
			t+=("$(seconds "$prof" stats --view overview "$dir/s$size")")
		elif [ "$view" = diff ]; then
			t+=("$(seconds "$prof" diff "$run" "$run")")
		else
			t+=("$(seconds "$prof" stats --view "$view" --top 0 "$run")")
		fi
	done
	name="stats --view $view"
	[ "$view" = diff ] && name="diff RUN RUN"
	[ "$view" = long-steps ] && name="overview, N/5 steps"
	awk -v a="${t[0]}" -v b="${t[1]}" -v name="$name" \
		'BEGIN { printf "%-22s %10.3f %10.3f %8.1f\n", name, a, b, (a > 0 ? b / a : 0) }'
done
