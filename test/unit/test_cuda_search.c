/*
 * Which libcupti the CUDA backend opens, over fake installations in a
 * temporary directory: a PyTorch cu12 wheel set, a cu13 wheel, a toolkit
 * with an unversioned link, and nothing at all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/device/cuda/backend_search.h"
#include "unit/unit.h"

static char root[1024];

/* Creates root/rel (and its directories) as an empty file. */
static void touch(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%.2048s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
}

static void link_to(const char *target, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%.2048s", root, rel);
	CHECK(symlink(target, p) == 0);
}

/* root/rel; kept for the test's life (the search inputs point at it), in
 * a static pool so that LeakSanitizer sees nothing lost. */
static const char *at(const char *rel)
{
	static char pool[32][PATH_MAX];
	static size_t used;
	CHECK(used < sizeof pool / sizeof pool[0]);
	char *p = pool[used++ % (sizeof pool / sizeof pool[0])];
	snprintf(p, PATH_MAX, "%s/%.2048s", root, rel);
	return p;
}

static void make_layout(void)
{
	const char *tmp = getenv("PROF_TEST_TMP");
	char base[512];
	snprintf(base, sizeof base, "%.480s", tmp && *tmp ? tmp : "/tmp");
	mkdir(base, 0755);
	snprintf(root, sizeof root, "%.480s/cuda_search_XXXXXX", base);
	CHECK(mkdtemp(root) != NULL);
	/* a cu12 PyTorch install: per-library wheels */
	touch("site/torch/lib/libtorch_cuda.so");
	touch("site/nvidia/cuda_runtime/lib/libcudart.so.12");
	touch("site/nvidia/cuda_cupti/lib/libcupti.so.12");
	/* a cu13 wheel: one directory */
	touch("site13/nvidia/cu13/lib/libcudart.so.13");
	touch("site13/nvidia/cu13/lib/libcupti.so.13");
	touch("site13/torch/lib/libtorch_cuda.so");
	/* a toolkit: CUPTI under extras, an unversioned link */
	touch("cuda/lib64/libcudart.so.13.0.96");
	touch("cuda/extras/CUPTI/lib64/libcupti.so.13.0.85");
	link_to("libcupti.so.13.0.85", "cuda/extras/CUPTI/lib64/libcupti.so");
	/* a CUDA 12 toolkit: files numbered by year, the major in the links */
	touch("cuda12/extras/CUPTI/lib64/libcupti.so.2023.3.0");
	link_to("libcupti.so.2023.3.0", "cuda12/extras/CUPTI/lib64/libcupti.so.12");
	link_to("libcupti.so.12", "cuda12/extras/CUPTI/lib64/libcupti.so");
	/* a toolkit of another major than the program's runtime */
	touch("cuda11/lib64/libcupti.so.11.8");
	link_to("libcupti.so.11.8", "cuda11/lib64/libcupti.so");
}

static char *real(const char *p)
{
	static char r[PATH_MAX];
	return realpath(p, r) ? r : (char *)"(none)";
}

static void test_order(void)
{
	char out[PATH_MAX];
	struct cupti_search_in in = { 0 };

	/* 1: what is mapped wins over everything. */
	in.loaded_cupti = "/opt/app/libcupti.so.12";
	in.cudart_path = at("cuda/lib64/libcudart.so.13.0.96");
	CHECK(cupti_search(&in, out, sizeof out) == 1);
	CHECK_STR(out, "/opt/app/libcupti.so.12");
	in.loaded_cupti = NULL;

	/* 2: next to a cu12 wheel's runtime, though CUDA_HOME has CUDA 13. */
	in.cudart_path = at("site/nvidia/cuda_runtime/lib/libcudart.so.12");
	in.cuda_home = at("cuda");
	CHECK(cupti_search(&in, out, sizeof out) == 2);
	CHECK_STR(out, real(at("site/nvidia/cuda_cupti/lib/libcupti.so.12")));

	/* 2: a cu13 wheel keeps both in one directory. */
	in.cudart_path = at("site13/nvidia/cu13/lib/libcudart.so.13");
	CHECK(cupti_search(&in, out, sizeof out) == 2);
	CHECK_STR(out, real(at("site13/nvidia/cu13/lib/libcupti.so.13")));

	/* 2: a toolkit's runtime: extras/CUPTI, through the unversioned link. */
	in.cudart_path = at("cuda/lib64/libcudart.so.13.0.96");
	CHECK(cupti_search(&in, out, sizeof out) == 2);
	CHECK_STR(out, real(at("cuda/extras/CUPTI/lib64/libcupti.so.13.0.85")));

	/* 3: no runtime mapped yet, but PyTorch's libraries are. */
	in.cudart_path = NULL;
	in.torch_lib_dir = at("site13/torch/lib");
	CHECK(cupti_search(&in, out, sizeof out) == 3);
	CHECK_STR(out, real(at("site13/nvidia/cu13/lib/libcupti.so.13")));
	in.torch_lib_dir = at("site/torch/lib");
	CHECK(cupti_search(&in, out, sizeof out) == 3);
	CHECK_STR(out, real(at("site/nvidia/cuda_cupti/lib/libcupti.so.12")));
	in.torch_lib_dir = NULL;

	/* 4: CUDA_HOME. */
	CHECK(cupti_search(&in, out, sizeof out) == 4);
	CHECK_STR(out, real(at("cuda/extras/CUPTI/lib64/libcupti.so.13.0.85")));
}

static void test_major_mismatch(void)
{
	char out[PATH_MAX];
	struct cupti_search_in in = { 0 };
	/* A CUDA 12 runtime from a directory without CUPTI, and a CUDA_HOME
	 * whose unversioned link is CUDA 11's: never the wrong major; the
	 * loader gets the right soname to look for. */
	touch("lonely/libcudart.so.12");
	in.cudart_path = at("lonely/libcudart.so.12");
	in.cuda_home = at("cuda11");
	CHECK(cupti_search(&in, out, sizeof out) == 5);
	CHECK_STR(out, "libcupti.so.12");
	/* The year-numbered toolkit: its links say 12. */
	in.cuda_home = at("cuda12");
	CHECK(cupti_search(&in, out, sizeof out) == 4);
	CHECK_STR(out, real(at("cuda12/extras/CUPTI/lib64/libcupti.so.2023.3.0")));
	touch("lonely13/libcudart.so.13");
	in.cudart_path = at("lonely13/libcudart.so.13");
	CHECK(cupti_search(&in, out, sizeof out) == 5);
	CHECK_STR(out, "libcupti.so.13");
	/* Nothing known at all: the loader's default name. */
	in.cudart_path = NULL;
	in.cuda_home = at("nothing-here");
	CHECK(cupti_search(&in, out, sizeof out) == 5);
	CHECK_STR(out, "libcupti.so");
	/* Too small a buffer is refused, not truncated. */
	char tiny[8];
	CHECK(cupti_search(&in, tiny, sizeof tiny) == 0);
}

static void test_soname_major(void)
{
	CHECK(cupti_soname_major("/x/libcudart.so.12") == 12);
	CHECK(cupti_soname_major("/x/libcudart.so.13.0.96") == 13);
	CHECK(cupti_soname_major("/x/torch/lib/libcudart-e409450e.so.11.0") == 11);
	CHECK(cupti_soname_major("/x/libcudart.so") == 0);
	CHECK(cupti_soname_major("/x.so.1/libcudart.so") == 0);
	CHECK(cupti_soname_major("libcupti.so.x") == 0);
}

int main(void)
{
	make_layout();
	test_order();
	test_major_mismatch();
	test_soname_major();
	return unit_done();
}
