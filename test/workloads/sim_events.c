/*
 * sim_events [STEPS]: a cross-stream dependency on the sim device through
 * an event. Each step (default 3), inside a user range "train_step" (the
 * annotation HTA's critical path is asked for):
 *   stream A: kernel "producer" 20 ms, then event E recorded on A;
 *   stream B: waits for E, then kernel "consumer" 5 ms, queued at once,
 *             so it would run alongside "producer" without the wait;
 *   the host synchronizes on E, then on stream B, and ends the step.
 * E is the same event every step, recorded anew (as PyTorch reuses its):
 * each step's waits are for that step's record.
 */
#include <prof/prof_tx.h>
#include <prof_sim.h>
#include <stdio.h>
#include <stdlib.h>

#define MS 1000000ull

static void step(prof_sim_stream *a, prof_sim_stream *b, prof_sim_event *e)
{
	prof_range_push("train_step");
	prof_sim_kernel(a, "producer", 20 * MS);
	prof_sim_event_record(e, a);
	prof_sim_stream_wait_event(b, e);
	prof_sim_kernel(b, "consumer", 5 * MS);
	prof_sim_event_synchronize(e);
	prof_sim_stream_sync(b);
	prof_range_pop();
	prof_step();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	prof_sim_stream *a = prof_sim_stream_create(0);
	prof_sim_stream *b = prof_sim_stream_create(0);
	prof_sim_event *e = prof_sim_event_create(0);
	if (!a || !b || !e) {
		fprintf(stderr, "sim_events: cannot create streams or the event\n");
		return 1;
	}
	for (int n = 0; n < steps; n++)
		step(a, b, e);
	printf("sim_events: %d steps, stream A %d, stream B %d, event %d\n", steps,
	       prof_sim_stream_id(a), prof_sim_stream_id(b), prof_sim_event_id(e));
	prof_sim_event_destroy(e);
	prof_sim_stream_destroy(a);
	prof_sim_stream_destroy(b);
	return 0;
}
