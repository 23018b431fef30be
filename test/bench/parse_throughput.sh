#!/usr/bin/env bash
# End-to-end parse throughput: synthetic raw runs of N events (test/bench/gen_raw,
# written through the real raw writer) parsed by `prof parse` into
# trace_view.json and every CSV; events/s, wall/user/sys time, peak RSS.
# Targets: >= 5 M events/s on one core, peak RSS <= 256 MB at 50 M events,
# time linear in N.
#
# Usage: test/bench/parse_throughput.sh [BUILD_DIR] [SIZES] [WORK_DIR] [RUNS]
#   BUILD_DIR  default build (a Release build: cmake -DCMAKE_BUILD_TYPE=Release)
#   SIZES      events, comma separated, default 1000000,10000000 (add 50000000:
#              its raw files take about 2.4 GB and its outputs about 12 GB)
#   WORK_DIR   where runs are generated and parsed, default $TMPDIR or /tmp; put it on
#              tmpfs (/dev/shm) to leave out the disk's write bandwidth
#   RUNS       parses per size (the best is kept), default 1
set -euo pipefail
build=${1:-build}
sizes=${2:-1000000,10000000}
work=${3:-${TMPDIR:-/tmp}}
runs=${4:-1}
prof="$build/bin/prof"
gen="$build/test/bench/gen_raw"
for f in "$prof" "$gen"; do
	[ -x "$f" ] || { echo "missing $f (build first)" >&2; exit 1; }
done
dir=$(mktemp -d "$work/prof-parse-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# peak RSS: /usr/bin/time when there is one, else VmHWM polled from /proc
measure() { # out_file cmd...
	local out=$1; shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%e %U %S %M" -o "$out" "$@" >/dev/null 2>"$out.err"
	else
		local t0 t1 hwm=0 h
		t0=$(date +%s%N)
		"$@" >/dev/null 2>"$out.err" &
		local p=$!
		while kill -0 "$p" 2>/dev/null; do
			h=$(awk '/VmHWM/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
			[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
			sleep 0.05
		done
		wait "$p"
		t1=$(date +%s%N)
		echo "$(echo "($t1 - $t0) / 1000000000" | bc -l) 0 0 $hwm" >"$out"
	fi
}

printf '%-10s %-10s %9s %9s %9s %8s %8s %10s %12s %10s\n' events raw_MB gen_s \
	parse_s user_s sys_s out_MB peak_RSS_MB events/s ns/event
IFS=, read -ra ns <<<"$sizes"
for n in "${ns[@]}"; do
	run="$dir/run$n"
	t0=$(date +%s%N)
	line=$("$gen" "$run" "$n")
	t1=$(date +%s%N)
	ev=$(awk '{print $2}' <<<"$line")
	rawb=$(awk '{print $4}' <<<"$line")
	best=""
	for _ in $(seq "$runs"); do
		rm -rf "$run/PROFILER_OUTPUT"
		sync
		measure "$dir/m" "$prof" parse "$run"
		read -r wall user sys rss <"$dir/m"
		if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc -l)" = 1 ]; then
			best=$wall; bu=$user; bs=$sys; brss=$rss
		fi
	done
	outb=$(du -sb "$run/PROFILER_OUTPUT" | awk '{print $1}')
	printf '%-10s %-10.0f %9.2f %9.2f %9.2f %8.2f %8.0f %10.1f %12.0f %10.1f\n' "$ev" \
		"$(echo "$rawb / 1048576" | bc -l)" "$(echo "($t1 - $t0) / 1000000000" | bc -l)" \
		"$best" "$bu" "$bs" "$(echo "$outb / 1048576" | bc -l)" "$(echo "$brss / 1024" | bc -l)" \
		"$(echo "$ev / $best" | bc -l)" "$(echo "$best * 1000000000 / $ev" | bc -l)"
	rm -rf "$run"
done
echo "(parse_s: wall time of prof parse, best of $runs; work dir $work)"
