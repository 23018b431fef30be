#!/bin/sh
# Every GPU check in one go, for a short lease on a GPU machine: the
# machine's facts, the torch 2.x scenarios (scenarios.py, in parallel: they
# check content, not time), then the overhead table (run_overhead.py,
# alone on the GPU). Writes report.txt and the run directories as
# tarballs (logs, outputs, and raw/ while the tarball stays under 15 MB)
# into OUTDIR, to be read on another machine.
#
#   test/gpu/device_check.sh PROF OUTDIR [PYTHON]
set -u
PROF=$(realpath "$1")
OUT=$2
PY=${3:-python3}
HERE=$(dirname "$(realpath "$0")")
WORK=$(mktemp -d /tmp/prof-gpu-XXXXXX)
mkdir -p "$OUT"
R=$OUT/report.txt

{
	echo "== machine"; date; nvidia-smi 2>&1 | head -20
	"$PY" -c 'import sys, torch; print(sys.executable, torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))'
	"$PY" -c 'import torch, os; d=os.path.dirname(torch.__file__); print(d)' | while read -r d; do
		ls "$d"/../nvidia 2>&1 | head -30; find "$d"/.. -name 'libcupti*' 2>/dev/null; done
	echo "== prof"; ldd "$PROF" | grep -i "not found"; "$PROF" --version
} >"$R" 2>&1

pids=""
for s in loop compile graphs userprof streams amp ddp inscript saved nvtx; do
	timeout 130 "$PY" "$HERE/scenarios.py" --prof "$PROF" --python "$PY" \
		--out "$WORK/scen" --only $s >"$WORK/scen-$s.txt" 2>&1 &
	pids="$pids $!"
done
wait $pids
date >>"$R"
for s in loop compile graphs userprof streams amp ddp inscript saved nvtx; do echo "== scenario $s"; cat "$WORK/scen-$s.txt"; done >>"$R"
{
	echo "== prof stats (loop)"
	d=$(ls -d "$WORK"/scen/loop/*_prof | head -1)
	"$PROF" stats "$d" 2>&1 | head -80
} >>"$R" 2>&1

echo "== flush cost (flush_cost.py: where a flush's time goes; Kineto's save() beside it)" >>"$R"
# under prof with device activity only: prof holds CUPTI (as in a real run)
# and its own hooks leave torch's profiler to the script
for n in 10 35; do
	timeout 60 "$PROF" run --no-parse -o "$WORK/flush" --activities DEVICE -- \
		"$PY" "$HERE/flush_cost.py" --steps $n >>"$R" 2>&1
done

date >>"$R"; echo "== overhead" >>"$R"
timeout 320 "$PY" "$HERE/run_overhead.py" --prof "$PROF" --python "$PY" --steps 150 \
	--repeat 2 --out "$WORK/over" >>"$R" 2>&1
echo "rc=$?" >>"$R"
# --activities CPU: operators only, no CUDA runtime call among them
# (prof's runs are parsed in the last repeat only: 1 of 0..1)
"$PY" - "$WORK"/over/prof_operators-1/*_prof >>"$R" 2>&1 <<'EOF'
import collections, json, sys
ev = json.load(open(sys.argv[1] + "/PROFILER_OUTPUT/trace_view.json"))["traceEvents"]
ops = collections.Counter(e["name"] for e in ev if e.get("cat") == "cpu_op")
cuda = {n: c for n, c in ops.items() if n.startswith("cu") or "kernel" in n}
print("  [%s] --activities CPU: %d operator names, CUDA among them: %s" % (
    "FAIL" if cuda else "ok", len(ops), list(cuda.items())[:5]))
EOF

# the run directories, raw/ included while it fits
pack() { # NAME DIR...
	name=$1; shift
	[ $# -gt 0 ] || return 0
	tar -czf "$OUT/$name.tar.gz" --exclude='torch_trace.json' --exclude='*.json.tmp' "$@" 2>>"$R"
	if [ "$(stat -c %s "$OUT/$name.tar.gz")" -gt 15000000 ]; then
		tar -czf "$OUT/$name.tar.gz" --exclude='torch_trace.json' --exclude=raw "$@" 2>>"$R"
		echo "$name: raw/ left out (too large)" >>"$R"
	fi
}
(cd "$WORK" && pack scen scen/loop scen/graphs scen/userprof scen/streams scen/amp scen/ddp scen/inscript scen/saved scen/nvtx)
(cd "$WORK" && pack compile scen/compile)
(cd "$WORK" && pack over $(ls -d over/*-1 2>/dev/null))
date >>"$R"; ls -la "$OUT" >>"$R"
