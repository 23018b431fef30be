#!/bin/sh
# The test stages, in order; the README's test command (and so .ci/run)
# runs them all:
#   quick  the normal build (build/) and the whole ctest suite
#   static the one-file build (build-static/, -DPROF_STATIC=ON: static
#          libraries from .ci/static-deps.sh, the agent and Python files
#          embedded) and its test, e2e.test_static
#   fuzz   the libFuzzer harnesses (build-fuzz/, CC=clang -DPROF_FUZZ=ON),
#          each for PROF_FUZZ_SECONDS (default 60); fails on any crash,
#          hang, leak or sanitizer report (test/fuzz/run.sh)
#   asan   the whole ctest suite built with -DPROF_SANITIZE=ON (build-asan/)
#   tsan   the agent's concurrency tests (exit, fork, signal handlers,
#          threads, kill matrix, stress) built with -DPROF_SANITIZE_THREAD=ON
#          (build-tsan/); fails on any ThreadSanitizer report
#   test/ci.sh [quick|static|fuzz|asan|tsan ...]    (no stage: all five)
set -eu
cd "$(dirname "$0")/.."
stages=${*:-quick static fuzz asan tsan}
tsan_tests='e2e\.test_(agent_exit|agent_reentry|agent_footprint|agent_tx|kill_matrix|stress)$'
secs=${PROF_FUZZ_SECONDS:-60}
for s in $stages; do
	case $s in
	quick | static | fuzz | asan | tsan) ;;
	*)
		echo "usage: $0 [quick|static|fuzz|asan|tsan ...]" >&2
		exit 2
		;;
	esac
done

stage() {
	echo "== ci: $1 ($(date +%H:%M:%S))"
}

for s in $stages; do
	case $s in
	quick)
		stage "quick: build/ + ctest"
		cmake -S . -B build
		cmake --build build -j2
		ctest --test-dir build --output-on-failure -j2
		;;
	static)
		stage "static: build-static/ (-DPROF_STATIC=ON) + e2e.test_static"
		cmake -S . -B build-static -DPROF_STATIC=ON
		cmake --build build-static -j2 --target prof
		ctest --test-dir build-static --output-on-failure -R 'e2e\.test_static$'
		;;
	fuzz)
		stage "fuzz: build-fuzz/, ${secs}s per harness"
		CC=clang cmake -S . -B build-fuzz -DPROF_FUZZ=ON -DBUILD_TESTING=OFF
		cmake --build build-fuzz -j2 --target fuzz_raw fuzz_config fuzz_archive fuzz_csv \
			fuzz_parse fuzz_kineto fuzz_nvtx
		sh test/fuzz/run.sh build-fuzz "$secs"
		;;
	asan)
		stage "asan: build-asan/ (ASan + UBSan) + ctest"
		cmake -S . -B build-asan -DPROF_SANITIZE=ON
		cmake --build build-asan -j2
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
			ctest --test-dir build-asan --output-on-failure -j2
		;;
	tsan)
		stage "tsan: build-tsan/ (ThreadSanitizer) + the agent's concurrency tests"
		cmake -S . -B build-tsan -DPROF_SANITIZE_THREAD=ON
		cmake --build build-tsan -j2
		# TSan sleeps 1 s in every process that exits with threads left
		# (atexit_sleep_ms): 300 such children made test_agent_exit 4 min
		# long. 50 ms still lets the threads run past the agent's finisher.
		TSAN_OPTIONS=${TSAN_OPTIONS:-atexit_sleep_ms=50} \
			ctest --test-dir build-tsan --output-on-failure -j2 -R "$tsan_tests"
		;;
	esac
done
echo "== ci: passed: $stages ($(date +%H:%M:%S))"
