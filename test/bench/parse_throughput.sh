#!/usr/bin/env bash
# End-to-end parse throughput: synthetic raw runs of N events (test/bench/gen_raw,
# written through the real raw writer) parsed by `prof parse` into
# trace_view.json and every CSV; events/s, wall/user/sys time, peak RSS.
# Targets: >= 5 M events/s on one core (1core_ev/s: the parse held to one
# CPU), peak RSS <= 256 MB at 50 M events, time linear in N. cache_MB: how
# much the page cache grew over the parse (the largest outputs are written
# direct and the rest flush-behind, so on a disk it stays far below
# out_MB; on tmpfs the outputs are memory and it equals out_MB).
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

# the floor: what the disk alone takes to accept that many bytes of output
# (dd from memory into a file beside the run, direct as prof's largest
# outputs are where the file system takes it), best of three
write_floor() { # bytes -> seconds
	local mb=$(( ($1 + 1048575) / 1048576 )) best="" t flag=oflag=direct
	rm -f "$dir/floor"
	dd if=/dev/zero of="$dir/floor" bs=1M count=1 $flag status=none 2>/dev/null || flag=
	for _ in 1 2 3; do
		rm -f "$dir/floor"
		sync
		/usr/bin/time -f "%e" -o "$dir/floor.t" dd if=/dev/zero of="$dir/floor" bs=1M \
			count="$mb" $flag status=none 2>/dev/null || { echo 0; return; }
		t=$(cat "$dir/floor.t")
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	rm -f "$dir/floor" "$dir/floor.t"
	echo "$best"
}

cached_kb() { awk '/^Cached:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0; }

# one core: the first CPU this script may run on
pin=""
if command -v taskset >/dev/null; then
	cpu=$(taskset -pc $$ 2>/dev/null | sed 's/.*: *//; s/[-,].*//')
	[ -n "$cpu" ] && pin="taskset -c $cpu"
fi

printf '%-10s %-8s %6s %8s %7s %6s %7s %8s %8s %10s %10s %9s %9s %9s\n' events raw_MB gen_s \
	parse_s user_s sys_s out_MB cache_MB peak_RSS events/s 1core_ev/s wall_ns/ev cpu_ns/ev \
	write_ns/ev
IFS=, read -ra ns <<<"$sizes"
for n in "${ns[@]}"; do
	run="$dir/run$n"
	t0=$(date +%s%N)
	line=$("$gen" "$run" "$n")
	t1=$(date +%s%N)
	ev=$(awk '{print $2}' <<<"$line")
	rawb=$(awk '{print $4}' <<<"$line")
	best=""
	best1=""
	for _ in $(seq "$runs"); do
		rm -rf "$run/PROFILER_OUTPUT"
		sync
		c0=$(cached_kb)
		measure "$dir/m" "$prof" parse "$run"
		c1=$(cached_kb)
		read -r wall user sys rss <"$dir/m"
		if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc -l)" = 1 ]; then
			best=$wall; bu=$user; bs=$sys; brss=$rss; bcache=$(( (c1 - c0) / 1024 ))
		fi
		# the same parse held to one core (the target's terms): its wall time
		if [ -n "$pin" ]; then
			rm -rf "$run/PROFILER_OUTPUT"
			sync
			measure "$dir/m1" $pin "$prof" parse "$run"
			read -r wall1 _ <"$dir/m1"
			if [ -z "$best1" ] || [ "$(echo "$wall1 < $best1" | bc -l)" = 1 ]; then
				best1=$wall1
			fi
		fi
	done
	outb=$(du -sb "$run/PROFILER_OUTPUT" | awk '{print $1}')
	rm -rf "$run"
	floor=$(write_floor "$outb")
	one=0
	[ -n "$best1" ] && one=$(echo "$ev / $best1" | bc -l)
	printf '%-10s %-8.0f %6.2f %8.2f %7.2f %6.2f %7.0f %8d %8.1f %10.0f %10.0f %9.1f %9.1f %9.1f\n' \
		"$ev" "$(echo "$rawb / 1048576" | bc -l)" "$(echo "($t1 - $t0) / 1000000000" | bc -l)" \
		"$best" "$bu" "$bs" "$(echo "$outb / 1048576" | bc -l)" "$bcache" \
		"$(echo "$brss / 1024" | bc -l)" \
		"$(echo "$ev / $best" | bc -l)" "$one" "$(echo "$best * 1000000000 / $ev" | bc -l)" \
		"$(echo "($bu + $bs) * 1000000000 / $ev" | bc -l)" \
		"$(echo "$floor * 1000000000 / $ev" | bc -l)"
done
echo "(parse_s: wall time of prof parse, best of $runs; work dir $work;"
echo " 1core_ev/s: the same parse held to one core with taskset (0: no taskset), best of $runs;"
echo " cpu_ns/ev: user + sys of every thread per event, the cost on one core;"
echo " cache_MB: page cache grown over the 2-thread parse (on disks, outputs are written direct"
echo "   or dropped behind);"
echo " write_ns/ev: dd writing as many bytes as the outputs, direct where it can, per event:"
echo "   the disk's floor)"
