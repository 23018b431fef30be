"""sim_ranges LIBPROF_SIM: device work launched inside the program's ranges,
for gpu_user_annotation: range "fwd" launches two 1 ms kernels on stream
A, range "bwd" one on stream B, and one kernel runs outside every range."""
import ctypes
import sys

import prof_tx

lib = ctypes.CDLL(sys.argv[1])
lib.prof_sim_stream_create.restype = ctypes.c_void_p
lib.prof_sim_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64]
lib.prof_sim_stream_sync.argtypes = [ctypes.c_void_p]
a = lib.prof_sim_stream_create(0)
b = lib.prof_sim_stream_create(0)
with prof_tx.range("fwd"):
    lib.prof_sim_kernel(a, b"k_fwd1", 1000000)
    lib.prof_sim_kernel(a, b"k_fwd2", 1000000)
with prof_tx.range("bwd"):
    lib.prof_sim_kernel(b, b"k_bwd", 1000000)
lib.prof_sim_kernel(a, b"k_alone", 1000000)
lib.prof_sim_stream_sync(a)
lib.prof_sim_stream_sync(b)
print("sim_ranges: 4 kernels")
