#!/usr/bin/env bash
# For scale: prof's parse against two other tools that turn a recording into
# a Chrome trace, side by side in one run, on comparable event counts.
#   prof      test/bench/gen_raw N events, then `prof parse` (trace_view.json and
#             every CSV)
#   uftrace   a C program (-pg) making N/2 calls of a small function, recorded by
#             `uftrace record` (N records: an entry and an exit per call), then
#             `uftrace dump --chrome`
#   PyTorch   /usr/bin/python3's torch: a loop of N/TORCH_DIV operators under
#             torch.profiler (CPU); the profiler's stop() (it builds its event
#             tree there) and export_chrome_trace()
# Whatever is missing (uftrace, cc, torch) is skipped.
#
# Usage: test/bench/compare_parsers.sh [BUILD_DIR] [N] [WORK_DIR] [TORCH_DIV]
#   N          events, default 1000000
#   TORCH_DIV  torch runs N/TORCH_DIV operators (default 5: its profiler is slow;
#              rates are per event, so the ratios hold)
set -uo pipefail
build=${1:-build}
n=${2:-1000000}
work=${3:-${TMPDIR:-/tmp}}
tdiv=${4:-5}
prof="$build/bin/prof"
gen="$build/test/bench/gen_raw"
dir=$(mktemp -d "$work/prof-compare.XXXXXX")
trap 'rm -rf "$dir"' EXIT

now() { date +%s%N; }
secs() { echo "($2 - $1) / 1000000000" | bc -l; }
rate() { echo "$1 / $2" | bc -l; }

rows=()
row() { # name events seconds note
	rows+=("$(printf '%-34s %10s %9.3f %12.0f  %s' "$1" "$2" "$3" "$(rate "$2" "$3")" "$4")")
}

# --- prof ---
prof_rate=""
if [ -x "$prof" ] && [ -x "$gen" ]; then
	line=$("$gen" "$dir/run" "$n")
	ev=$(awk '{print $2}' <<<"$line")
	sync
	t0=$(now)
	"$prof" parse "$dir/run" >/dev/null 2>&1
	t1=$(now)
	s=$(secs "$t0" "$t1")
	prof_rate=$(rate "$ev" "$s")
	row "prof parse (raw -> trace + CSVs)" "$ev" "$s" \
		"out $(du -sm "$dir/run/PROFILER_OUTPUT" | cut -f1) MB"
	rm -rf "$dir/run"
else
	echo "prof: $prof or $gen missing, skipped" >&2
fi

# --- uftrace ---
uf_rec="" uf_dump=""
if command -v uftrace >/dev/null && command -v cc >/dev/null; then
	cat >"$dir/calls.c" <<'EOF'
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) void work(long i) { sink += i; }
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	for (long i = 0; i < n; i++)
		work(i);
	return 0;
}
EOF
	if cc -O1 -pg -o "$dir/calls" "$dir/calls.c"; then
		calls=$((n / 2))
		t0=$(now)
		uftrace record -d "$dir/uftrace.data" "$dir/calls" "$calls" >/dev/null 2>&1
		t1=$(now)
		uftrace dump --chrome -d "$dir/uftrace.data" >"$dir/uftrace.json" 2>/dev/null
		t2=$(now)
		recs=$((calls * 2))
		uf_rec=$(rate "$recs" "$(secs "$t0" "$t1")")
		uf_dump=$(rate "$recs" "$(secs "$t1" "$t2")")
		row "uftrace record ($calls calls)" "$recs" "$(secs "$t0" "$t1")" "recording, not parsing"
		row "uftrace dump --chrome" "$recs" "$(secs "$t1" "$t2")" \
			"out $(du -sm "$dir/uftrace.json" | cut -f1) MB"
		rm -rf "$dir/uftrace.data" "$dir/uftrace.json"
	fi
else
	echo "uftrace: not installed (apt-get install -y uftrace), skipped" >&2
fi

# --- PyTorch ---
t_stop="" t_export="" t_both=""
py=/usr/bin/python3
ops=$((n / tdiv))
if [ -x "$py" ] && "$py" -c "import torch" 2>/dev/null; then
	out=$("$py" - "$ops" "$dir/torch.json" <<'EOF'
import sys, time, torch
from torch.profiler import profile, ProfilerActivity
n, path = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(1)
x = torch.ones(4)
p = profile(activities=[ProfilerActivity.CPU])
p.start()
for _ in range(n):
    torch.add(x, x)
t0 = time.perf_counter()
p.stop()
t1 = time.perf_counter()
p.export_chrome_trace(path)
t2 = time.perf_counter()
ev = sum(1 for e in p.events())
print(ev, t1 - t0, t2 - t1)
EOF
)
	if [ -n "$out" ]; then
		read -r tev ts te <<<"$out"
		t_stop=$(rate "$tev" "$ts")
		t_export=$(rate "$tev" "$te")
		t_both=$(rate "$tev" "$(echo "$ts + $te" | bc -l)")
		row "torch.profiler stop() ($ops ops)" "$tev" "$ts" "builds the event tree"
		row "torch.profiler export_chrome_trace" "$tev" "$te" \
			"out $(du -sm "$dir/torch.json" | cut -f1) MB"
		row "torch.profiler stop() + export" "$tev" "$(echo "$ts + $te" | bc -l)" ""
	fi
else
	echo "PyTorch: /usr/bin/python3 has no torch, skipped" >&2
fi

printf '%-34s %10s %9s %12s  %s\n' tool events seconds events/s note
printf '%s\n' "${rows[@]}"
if [ -n "$prof_rate" ]; then
	echo
	echo "prof parse events/s relative to:"
	[ -n "$uf_dump" ] && printf '  uftrace dump --chrome         %6.2fx\n' "$(echo "$prof_rate / $uf_dump" | bc -l)"
	[ -n "$uf_rec" ] && printf '  uftrace record                %6.2fx\n' "$(echo "$prof_rate / $uf_rec" | bc -l)"
	[ -n "$t_stop" ] && printf '  torch.profiler stop()         %6.2fx\n' "$(echo "$prof_rate / $t_stop" | bc -l)"
	[ -n "$t_export" ] && printf '  torch export_chrome_trace     %6.2fx\n' "$(echo "$prof_rate / $t_export" | bc -l)"
	[ -n "$t_both" ] && printf '  torch stop() + export         %6.2fx\n' "$(echo "$prof_rate / $t_both" | bc -l)"
fi
echo "(work dir $work; one run each)"
