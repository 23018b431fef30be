/*
 * Which libcupti to open: the one matching the program's CUDA runtime,
 * never a second one in a process (two CUPTIs on one driver are not
 * supported). Search order:
 *
 *   1. a libcupti already mapped in the process (PyTorch links it): it is
 *      the one, whatever else exists;
 *   2. next to the loaded libcudart.so.N, N being its major version:
 *        <cudart dir>/                      cu13 wheels (nvidia/cu13/lib), toolkits
 *        <cudart dir>/../../cuda_cupti/lib  cu12 wheels (nvidia/cuda_runtime/lib)
 *        <cudart dir>/../extras/CUPTI/lib64 toolkits (cuda/lib64)
 *   3. PyTorch's bundled NVIDIA libraries, from the loaded libtorch's
 *      directory (site-packages/torch/lib):
 *        ../../nvidia/cuda_cupti/lib, ../../nvidia/cu13/lib
 *   4. $CUDA_HOME/extras/CUPTI/lib64, $CUDA_HOME/lib64 (CUDA_HOME, else
 *      CUDA_PATH, else /usr/local/cuda)
 *   5. the loader's own path: "libcupti.so.N", then "libcupti.so".
 *
 * In a directory, libcupti.so.N is tried, then libcupti.so when it
 * resolves to major N (an unversioned link may point at another major).
 * With no libcudart mapped, N is unknown and majors 13, 12, 11 are tried
 * in that order. Pure over the file system, for the unit tests.
 */
#ifndef PROF_CUDA_BACKEND_SEARCH_H
#define PROF_CUDA_BACKEND_SEARCH_H

#include <stddef.h>

struct cupti_search_in {
	const char *loaded_cupti;   /* path of a mapped libcupti, or NULL */
	const char *cudart_path;    /* path of the mapped libcudart.so.N, or NULL */
	const char *torch_lib_dir;  /* directory of the mapped libtorch, or NULL */
	const char *cuda_home;      /* NULL: none */
};

/* The major version in a "libcudart.so.12.4.127"-style name; 0 unknown. */
int cupti_soname_major(const char *path);

/* Writes the path (or bare soname, step 5) to dlopen into `out`.
 * Returns the step (1..5) that found it; 0 when `len` is too small. */
int cupti_search(const struct cupti_search_in *in, char *out, size_t len);

#endif
