"""sim_ctypes LIBPROF_SIM: the sim device from Python through ctypes, which
loads the library RTLD_LOCAL, after prof's agent started: the device is
found only when the library injects itself. Three 1 ms kernels "py_k"."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.prof_sim_stream_create.restype = ctypes.c_void_p
lib.prof_sim_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64]
lib.prof_sim_stream_sync.argtypes = [ctypes.c_void_p]
stream = lib.prof_sim_stream_create(0)
for _ in range(3):
    lib.prof_sim_kernel(stream, b"py_k", 1000000)
lib.prof_sim_stream_sync(stream)
print("sim_ctypes: 3 kernels")
