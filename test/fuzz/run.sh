#!/bin/sh
# Runs each libFuzzer harness for SECONDS, PROF_FUZZ_JOBS (2) at a time,
# over a copy of its seed corpus
# (test/fixtures/fuzz/<name>/; fuzz_parse's streams are raw's seeds and
# its own); fails on any crash, leak or timeout, whose input is left in
# BUILD_DIR/test/fuzz/artifacts/<name>/.
#   test/fuzz/run.sh BUILD_DIR SECONDS [NAME...]   (names: raw config archive csv parse kineto nvtx)
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS [raw|config|archive|csv|parse|kineto|nvtx ...]" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
secs=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
names=${*:-raw config archive csv parse kineto nvtx}
# Two at a time (PROF_FUZZ_JOBS): each harness is one process on one core,
# and CI has two; the time each gets is the same.
jobs=${PROF_FUZZ_JOBS:-2}
for n in $names; do
	if [ ! -x "$build/test/fuzz/fuzz_$n" ]; then
		echo "run.sh: $build/test/fuzz/fuzz_$n missing (configure with CC=clang -DPROF_FUZZ=ON)" >&2
		exit 2
	fi
done

# Runs harness $1; its status goes into $build/test/fuzz/$1.rc.
fuzz_one() {
	n=$1
	corpus=$build/test/fuzz/corpus/$n
	art=$build/test/fuzz/artifacts/$n
	mkdir -p "$corpus" "$art"
	cp "$src/test/fixtures/fuzz/$n/"* "$corpus/"
	[ "$n" = parse ] && cp "$src/test/fixtures/fuzz/raw/"* "$corpus/"
	"$build/test/fuzz/fuzz_$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$corpus" \
		>"$build/test/fuzz/$n.log" 2>&1
	echo $? >"$build/test/fuzz/$n.rc"
}

# What harness $1 did; 1 when it failed.
fuzz_report() {
	n=$1
	art=$build/test/fuzz/artifacts/$n
	rc=$(cat "$build/test/fuzz/$n.rc")
	echo "== fuzz_$n: ${secs}s"
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$build/test/fuzz/$n.log"
	if [ "$rc" -ne 0 ] || ls "$art" | grep -q .; then
		echo "fuzz_$n FAILED (rc $rc); log: $build/test/fuzz/$n.log; inputs: $art" >&2
		grep -E 'ERROR|SUMMARY|runtime error' "$build/test/fuzz/$n.log" | head -5 >&2
		return 1
	fi
	return 0
}

status=0
batch=""
for n in $names; do
	fuzz_one "$n" &
	batch="$batch $n"
	if [ "$(echo $batch | wc -w)" -ge "$jobs" ]; then
		wait
		for b in $batch; do fuzz_report "$b" || status=1; done
		batch=""
	fi
done
wait
for b in $batch; do fuzz_report "$b" || status=1; done
exit $status
