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

/* Where a process image's streams go: <run>/raw/<pid>.<n>/ where n counts
 * the images a pid has had (exec keeps the pid). */
#define PROF_RAW_DIR            "raw"
#define PROF_LOG_DIR            "logs"
#define PROF_LAUNCHER_STREAMS   "launcher"

#endif
