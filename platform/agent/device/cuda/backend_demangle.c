/*
 * Kernel names as people read them ("void at::native::elementwise_kernel<...>(...)"
 * rather than "_ZN2at6native18elementwise_kernel..."), as nsys and Kineto
 * print them. The agent links no C++ runtime: __cxa_demangle is borrowed
 * from the libstdc++ the program has mapped (every PyTorch process does),
 * and names stay mangled without one. Demangling costs microseconds, so
 * the result is cached by CUPTI's name pointer, which every record of a
 * kernel shares; the mangled text is kept too, in case CUPTI reuses the
 * memory for another name after a module unloads.
 */
#define _GNU_SOURCE
#include "agent/device/cuda/backend_parts.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_NAMES_MAX (1u << 16)   /* distinct kernels cached */

typedef char *(*cuda_demangle_fn)(const char *, char *, size_t *, int *);

struct cuda_name {
	const char *ptr;      /* CUPTI's pointer; NULL: free slot */
	char *mangled;
	char *readable;       /* NULL: demangling failed, use the mangled text */
};

static struct {
	struct cuda_name *v;
	uint32_t cap, used;
	int looked;
	cuda_demangle_fn fn;
} cuda_names;

static cuda_demangle_fn cuda_demangler(void)
{
	if (!cuda_names.looked) {
		cuda_names.looked = 1;
		/* Never load libstdc++ into a program that does not have it. */
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
		void *f = h ? dlsym(h, "__cxa_demangle") : dlsym(RTLD_DEFAULT, "__cxa_demangle");
		memcpy(&cuda_names.fn, &f, sizeof f);
	}
	return cuda_names.fn;
}

static uint32_t cuda_name_home(const char *p, uint32_t cap)
{
	return (uint32_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int cuda_names_grow(void)
{
	uint32_t cap = cuda_names.cap ? cuda_names.cap * 2 : 256;
	struct cuda_name *nv = calloc(cap, sizeof *nv);
	if (!nv)
		return -1;
	for (uint32_t i = 0; i < cuda_names.cap; i++) {
		struct cuda_name *e = &cuda_names.v[i];
		if (!e->ptr)
			continue;
		uint32_t j = cuda_name_home(e->ptr, cap);
		while (nv[j].ptr)
			j = (j + 1) & (cap - 1);
		nv[j] = *e;
	}
	free(cuda_names.v);
	cuda_names.v = nv;
	cuda_names.cap = cap;
	return 0;
}

static void cuda_name_fill(struct cuda_name *e, const char *name)
{
	int status = -1;
	free(e->mangled);
	free(e->readable);
	e->ptr = name;
	e->mangled = strdup(name);
	e->readable = cuda_demangler()(name, NULL, NULL, &status);
	if (status != 0) {
		free(e->readable);
		e->readable = NULL;
	}
}

const char *cuda_demangle(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z' || !cuda_demangler())
		return name;
	if (cuda_names.used * 2 >= cuda_names.cap &&
	    (cuda_names.cap >= CUDA_NAMES_MAX * 2 || cuda_names_grow()))
		return name;
	uint32_t i = cuda_name_home(name, cuda_names.cap);
	while (cuda_names.v[i].ptr && cuda_names.v[i].ptr != name)
		i = (i + 1) & (cuda_names.cap - 1);
	struct cuda_name *e = &cuda_names.v[i];
	if (!e->ptr)
		cuda_names.used++;
	if (!e->ptr || !e->mangled || strcmp(e->mangled, name) != 0)
		cuda_name_fill(e, name);
	return e->readable ? e->readable : name;
}

void cuda_demangle_free(void)
{
	for (uint32_t i = 0; i < cuda_names.cap; i++) {
		free(cuda_names.v[i].mangled);
		free(cuda_names.v[i].readable);
	}
	free(cuda_names.v);
	memset(&cuda_names, 0, sizeof cuda_names);
}
