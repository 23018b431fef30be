"""mindspore.Profiler.op_analyse's answer, from a prof result directory.

MindSpore returns JSON text: {"<op>": [{"op_side", "input_shape",
"op_occurrences", "op_total_time(us)", "op_avg_time(us)"}, ...],
"device_id": N}, one entry per side and input shape. Here an operator
(operator_details.csv, host time) gives "cpu" entries and, when it
launched device work, "gpu" entries with its device time; a device task's
name (kernel_details.csv) gives "gpu" entries, filtered by device_id when
one is given. input_shape is the shapes prof recorded ("" without them).
"""
import collections
import csv
import json
import os

NOT_FOUND = ("The information of <%s> is not found. Please verify that the operator name is "
             "correct or the operator is used in the network.")


def _rows(out, name):
    path = os.path.join(out, "PROFILER_OUTPUT", name)
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def _entries(groups):
    """[(side, shapes) -> [µs, ...]] as MindSpore's entries."""
    out = []
    for (side, shape), times in groups.items():
        total = sum(times)
        out.append({"op_side": side, "input_shape": shape, "op_occurrences": len(times),
                    "op_total_time(us)": round(total, 4),
                    "op_avg_time(us)": round(total / len(times), 4)})
    return out


def op_info(out, names, device_id):
    """The JSON text for `names` (a list); RuntimeError for a name with no
    row, in MindSpore's words."""
    ops, tasks = _rows(out, "operator_details.csv"), _rows(out, "kernel_details.csv")
    result = {}
    for name in names:
        groups = collections.OrderedDict()
        for r in ops:
            if r.get("Name") != name:
                continue
            shape = r.get("Input Shapes") or ""
            groups.setdefault(("cpu", shape), []).append(float(r["Host Total Duration(us)"]))
            device = float(r.get("Device Total Duration(us)") or 0)
            if device > 0:
                groups.setdefault(("gpu", shape), []).append(device)
        for r in tasks:
            if r.get("Name") != name:
                continue
            if device_id is not None and r.get("Device_id") != str(device_id):
                continue
            shape = r.get("Input Shapes") or ""
            shape = "" if shape == "N/A" else shape
            groups.setdefault(("gpu", shape), []).append(float(r["Duration(us)"]))
        if not groups:
            raise RuntimeError(NOT_FOUND % name)
        result[name] = _entries(groups)
    result["device_id"] = 0 if device_id is None else device_id
    return json.dumps(result)
