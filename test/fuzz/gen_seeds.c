/*
 * Writes the fuzzers' seed corpora (test/fixtures/fuzz/<name>/) with the
 * real raw writer and archive packer: gen_seeds OUT_DIR. Raw streams are
 * cut after their last committed byte, which the reader accepts (a file
 * that ends inside a chunk) and which keeps the seeds a few KiB.
 * Built with -DPROF_FUZZ=ON; run by hand when the formats change.
 */
#include "unit/rawgen.h"
#include "archive/archive.h"
#include "raw/raw_format.h"

static void cut_to_committed(const char *path)
{
	FILE *f = fopen(path, "rb");
	long size = rg_size(path), end = RAW_HEADER_SIZE;
	struct raw_file_header h;
	if (!f || fread(&h, sizeof h, 1, f) != 1)
		exit(1);
	for (long off = RAW_HEADER_SIZE; off + (long)sizeof(struct raw_chunk_header) <= size;
	     off += h.chunk_size) {
		struct raw_chunk_header ch;
		fseek(f, off, SEEK_SET);
		if (fread(&ch, sizeof ch, 1, f) != 1 || ch.magic != RAW_CHUNK_MAGIC)
			break;
		end = off + (long)sizeof ch + (long)ch.committed;
	}
	fclose(f);
	rg_truncate(path, end);
}

static void raw_seeds(const char *dir)
{
	struct raw_writer w;
	/* a thread stream with every CPU-side record */
	if (rg_open(&w, dir, "thread.raw", 100, 101, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "python"))
		exit(1);
	rg_process(&w, 1, 100, "python train.py --epochs 1");
	rg_tname(&w, 2, 101, "MainThread");
	rg_meta(&w, 3, "framework", "torch", 0);
	rg_recording(&w, 4, 1, 0);
	rg_mark(&w, 5, "hello");
	rg_step(&w, 6, 1);
	rg_push(&w, 7, "forward");
	rg_op(&w, 8, 9, 101, "aten::mm", "[[2,3],[3,4]]", "float,float", "train.py:10", 1, 0);
	rg_pop(&w, 10);
	rg_start(&w, 11, 7, "data");
	rg_end(&w, 12, 7);
	rg_step(&w, 13, 2);
	raw_writer_close(&w);
	cut_to_committed(rg_path(dir, "thread.raw"));

	/* two chunks, the second one cut */
	if (rg_open(&w, dir, "chunks.raw", 100, 102, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "worker"))
		exit(1);
	char name[32];
	for (unsigned i = 0; i < 700; i++) {
		snprintf(name, sizeof name, "r%u", i % 40);
		rg_push(&w, 100 + 2 * i, name);
		rg_pop(&w, 101 + 2 * i);
	}
	raw_writer_close(&w);
	cut_to_committed(rg_path(dir, "chunks.raw"));

	/* host samples, left open (no RAW_FILE_CLOSED) */
	if (rg_open(&w, dir, "host.raw", 99, 99, RAW_STREAM_HOST, RAW_CLOCK_MONOTONIC, "prof"))
		exit(1);
	rg_host(&w, 1000, 12.5, 1 << 20, 4096);
	rg_host(&w, 2000, 50.0, 2 << 20, 8192);
	cut_to_committed(rg_path(dir, "host.raw"));

	/* a device stream */
	if (rg_open(&w, dir, "dev.raw", 100, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "dev"))
		exit(1);
	rg_dev_info(&w, 1, 0, "sim0");
	rg_dev_api(&w, 2, 3, 1, 101, "sim_launch");
	rg_dev_task(&w, RAW_DEV_KERNEL, 4, 9, 1, 0, 7, "gemm", 0, 0, 64);
	rg_dev_mem(&w, 10, 101, 0, 0x1000, 4096, 0);
	rg_dev_coll(&w, 11, 20, 2, 0, 7, "allreduce", "default_group", "0,1", 0, -1, 1 << 20);
	rg_dev_sample(&w, 21, 0, 80, 1 << 30);
	rg_dev_marker(&w, 22, 23, 101, "nvtx", "dom", 1);
	raw_writer_close(&w);
	cut_to_committed(rg_path(dir, "dev.raw"));
}

/* fuzz_parse's own (raw's seeds are its too): framework operators, nested,
 * on a thread and on a torch thread (a backward op). */
static void parse_seeds(const char *dir)
{
	struct raw_writer w;
	if (rg_open(&w, dir, "fw.raw", 100, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC, "fw"))
		exit(1);
	rg_op(&w, 10, 90, 101, "aten::linear", "[[8, 4]]", "[\"float\"]", "train.py:3", 1, 0);
	rg_op(&w, 20, 50, 101, "aten::addmm", "[[8, 4], [4, 2]]", NULL, NULL, 2, 0);
	rg_op(&w, 20, 30, 101, "aten::t", NULL, NULL, NULL, -1, 0);
	rg_op(&w, 60, 80, -3, "aten::mm", NULL, NULL, NULL, 1, 101);
	raw_writer_close(&w);
	cut_to_committed(rg_path(dir, "fw.raw"));
}

static void archive_seeds(const char *tmp, const char *dir)
{
	char *run = rg_path(tmp, "run");
	char *sub = rg_path(run, "raw");
	fs_mkdir_p(sub);
	rg_write(rg_path(run, "profiler_info.json"), "{\"version\": 1}\n");
	rg_write(rg_path(sub, "a.txt"), "abc\n");
	const enum arc_format fmts[] = { ARC_TAR_GZ, ARC_ZIP };
	const char *names[] = { "run.tar.gz", "run.zip" };
	for (int i = 0; i < 2; i++) {
		char *out = NULL;
		uint64_t skipped = 0;
		struct arc_error err;
		if (arc_pack(run, fmts[i], &out, &skipped, &err) != ARC_OK) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
		char *to = rg_path(dir, names[i]);
		if (rename(out, to) != 0)
			exit(1);
	}
}

static void config_seeds(const char *dir)
{
	rg_write(rg_path(dir, "defaults.json"), "{}");
	rg_write(rg_path(dir, "full.json"),
		 "{\"output_path\": \"./out\", \"activities\": [\"CPU\", \"DEVICE\"],\n"
		 " \"schedule\": {\"skip_first\": 1, \"wait\": 1, \"warmup\": 1, \"active\": 2, \"repeat\": 1},\n"
		 " \"record_shapes\": true, \"profile_memory\": true, \"with_stack\": false,\n"
		 " \"export_type\": [\"text\", \"db\"], \"profiler_level\": \"Level1\",\n"
		 " \"step_list\": \"3-5, 7\", \"delay\": 1.5, \"duration\": 10,\n"
		 " \"sampling_interval\": 50, \"host_sys\": [\"cpu\", \"mem\", \"disk\"],\n"
		 " \"archive\": \"tar.gz\", \"timeline_limit_mb\": 100}\n");
	rg_write(rg_path(dir, "bad_type.json"), "{\"delay\": \"soon\", \"schedule\": {\"wait\": -1}}");
	rg_write(rg_path(dir, "steps.txt"), "1, 2-4,10");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds OUT_DIR\n");
		return 2;
	}
	char *raw = rg_path(argv[1], "raw"), *cfg = rg_path(argv[1], "config"),
	     *arc = rg_path(argv[1], "archive"), *tmp = rg_path(argv[1], "tmp"),
	     *parse = rg_path(argv[1], "parse");
	fs_mkdir_p(raw);
	fs_mkdir_p(cfg);
	fs_mkdir_p(arc);
	fs_mkdir_p(tmp);
	fs_mkdir_p(parse);
	raw_seeds(raw);
	parse_seeds(parse);
	config_seeds(cfg);
	archive_seeds(tmp, arc);
	rg_rmrf(tmp);
	return 0;
}
