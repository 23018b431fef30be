/*
 * The environment variables through which the launcher configures the
 * agent: the flattened form of the configuration, so the agent needs no
 * JSON parser. The agent is inert unless PROF_AGENT_RUN_DIR is set.
 */
#ifndef PROF_AGENT_ENV_H
#define PROF_AGENT_ENV_H

#define PROF_AGENT_RUN_DIR      "PROF_AGENT_RUN_DIR"      /* the run directory */
#define PROF_AGENT_CLOCK        "PROF_AGENT_CLOCK"        /* "tsc" or "mono" */
#define PROF_AGENT_TSC_HZ       "PROF_AGENT_TSC_HZ"       /* launcher's TSC rate estimate */
#define PROF_AGENT_CHUNK_KB     "PROF_AGENT_CHUNK_KB"     /* raw chunk size */
#define PROF_AGENT_ACTIVITIES   "PROF_AGENT_ACTIVITIES"   /* "CPU", "DEVICE", "CPU,DEVICE" */
#define PROF_AGENT_START_PAUSED "PROF_AGENT_START_PAUSED" /* "1": wait for prof_start() */
#define PROF_AGENT_SCHEDULE     "PROF_AGENT_SCHEDULE"     /* "skip_first,wait,warmup,active,repeat" */
#define PROF_AGENT_FW_FLAGS     "PROF_AGENT_FW_FLAGS"     /* PROF_FW_* bits, decimal */
#define PROF_AGENT_DYNAMIC      "PROF_AGENT_DYNAMIC"      /* "1": record only in --dynamic windows */
#define PROF_AGENT_DEVICE       "PROF_AGENT_DEVICE"       /* "1": device activity on (activities DEVICE) */
/* PROF_AGENT_DEVICE's other value: no device activity, but NVTX traced, so
 * that operators can come as torch's NVTX ranges (unless PROF_OPS_NVTX=0) */
#define PROF_AGENT_DEVICE_NVTX  "nvtx"
#define PROF_AGENT_CYCLES       "PROF_AGENT_CYCLES"       /* "1": a result per schedule cycle */
#define PROF_AGENT_TX           "PROF_AGENT_TX"           /* "0": no prof_tx/NVTX marks, ranges (msprof_tx) */
#define PROF_AGENT_RANKS        "PROF_AGENT_RANKS"        /* is_rank: "0,3", the ranks that record */
/* The rank a process's program named in init_process_group, set by prof's
 * Python hooks for the processes it starts (spawned DataLoader workers):
 * read after the launchers' variables (common/rank.h). */
#define PROF_AGENT_RANK         "PROF_AGENT_RANK"
/* prof's Python directory, first on PYTHONPATH: the agent puts it back
 * where a launch script dropped it (platform/agent/agent_python.c) */
#define PROF_AGENT_PYTHON_DIR   "PROF_AGENT_PYTHON_DIR"
/* mstx_domain_include / _exclude: "a,b" (common/domain_filter.h); one at most */
#define PROF_AGENT_MSTX_INCLUDE "PROF_AGENT_MSTX_INCLUDE"
#define PROF_AGENT_MSTX_EXCLUDE "PROF_AGENT_MSTX_EXCLUDE"

/* Framework collection switches, as the agent reports them to the Python
 * hooks (prof_fw_state) and as the launcher passes them (PROF_AGENT_FW_FLAGS,
 * raw_control.dyn_flags). */
#define PROF_FW_RECORDING 0x01u /* the current step is recorded */
#define PROF_FW_WARMUP    0x02u /* the current step warms up: run collectors, keep nothing */
#define PROF_FW_OPS       0x04u /* CPU activity: collect framework operators */
#define PROF_FW_SHAPES    0x08u /* record_shapes */
#define PROF_FW_STACK     0x10u /* with_stack */
#define PROF_FW_MEMORY    0x20u /* profile_memory */
#define PROF_FW_MODULES   0x40u /* with_modules */
#define PROF_FW_FLOPS     0x100u /* with_flops: operators' floating-point operations */
#define PROF_FW_GC        0x80u /* gc_detect: Python's start-up hook reports garbage
				 * collections (prof_fw_gc), torch or not */

/* Where a process image's streams go: <run>/raw/<pid>.<n>/ where n counts
 * the images a pid has had (exec keeps the pid). */
#define PROF_RAW_DIR            "raw"
#define PROF_LOG_DIR            "logs"
#define PROF_LAUNCHER_STREAMS   "launcher"
/* <run>/raw.removed: written by --data-simplification when it removes raw/
 * (its first line: when), so a later parse says why raw/ is gone. */
#define PROF_RAW_REMOVED        "raw.removed"

#endif
