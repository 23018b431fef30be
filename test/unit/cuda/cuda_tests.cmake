# Unit tests of the CUDA backend, test/unit/test_cuda_*.c: built only with
# the CUPTI headers (PROF_HAVE_CUDA). The backend's sources live in the
# agent, not in a library, so each test compiles the ones it exercises;
# stand-ins for libcupti and libnvidia-ml take the GPU's place.
set(CUDA_SRC ${PROJECT_SOURCE_DIR}/platform/agent/device/cuda)
set(CUDA_PURE ${CUDA_SRC}/backend_convert.c ${CUDA_SRC}/backend_markers.c
  ${CUDA_SRC}/backend_nccl.c ${CUDA_SRC}/backend_cbid.c ${CUDA_SRC}/backend_cbid_table.c
  ${CUDA_SRC}/backend_search.c ${CUDA_SRC}/backend_events.c)
set(CUDA_AGENT ${CUDA_SRC}/backend.c ${CUDA_SRC}/backend_cupti.c ${CUDA_SRC}/backend_buffers.c
  ${CUDA_SRC}/backend_tid.c ${CUDA_SRC}/backend_window.c ${CUDA_SRC}/backend_demangle.c
  ${CUDA_SRC}/backend_nvtx.c)

add_library(test_nvml_stub SHARED ${CMAKE_CURRENT_LIST_DIR}/stub_nvml.c)
add_library(test_fake_cupti SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cupti.c)
# "libcupti-fake.so": the backend recognises a mapped libcupti by its name.
set_target_properties(test_fake_cupti PROPERTIES OUTPUT_NAME cupti-fake)
set_target_properties(test_nvml_stub test_fake_cupti PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/unit C_VISIBILITY_PRESET hidden)
target_include_directories(test_fake_cupti PRIVATE ${CUPTI_INCLUDE_DIR} ${CUDA_RUNTIME_INCLUDE_DIR})

file(GLOB PROF_CUDA_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../test_cuda_*.c)
foreach(src ${PROF_CUDA_UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src} ${CUDA_PURE})
  if(name STREQUAL "test_cuda_backend")
    target_sources(${name} PRIVATE ${CUDA_AGENT})
    add_dependencies(${name} test_fake_cupti)
    target_compile_definitions(${name} PRIVATE
      PROF_TEST_FAKE_CUPTI="$<TARGET_FILE:test_fake_cupti>")
  endif()
  add_dependencies(${name} test_nvml_stub)
  target_compile_definitions(${name} PRIVATE PROF_TEST_NVML_STUB="$<TARGET_FILE:test_nvml_stub>")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/unit)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../..
    ${CUPTI_INCLUDE_DIR} ${CUDA_RUNTIME_INCLUDE_DIR})
  target_link_libraries(${name} PRIVATE prof_platform prof_core ${CMAKE_DL_LIBS})
  add_test(NAME unit.${name} COMMAND ${name})
  set_tests_properties(unit.${name} PROPERTIES
    ENVIRONMENT "PROF_TEST_FIXTURES=${CMAKE_CURRENT_LIST_DIR}/../../fixtures;PROF_TEST_TMP=${CMAKE_BINARY_DIR}/test/tmp")
endforeach()

# The CUDA path end to end on the stand-in libcupti: prof run, the agent's
# backend, the parse (e2e_fake_cuda.py).
add_executable(fake_cuda_app ${CMAKE_CURRENT_LIST_DIR}/fake_cuda_app.c)
set_target_properties(fake_cuda_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/unit)
target_include_directories(fake_cuda_app PRIVATE ${CUPTI_INCLUDE_DIR} ${CUDA_RUNTIME_INCLUDE_DIR})
target_link_libraries(fake_cuda_app PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
# NVTX as torch 2.x has it (header only, CUDA 12+'s include/nvtx3): the
# app's FAKE_TORCH_OPS=nvtx mode; without it the e2e test skips that mode.
find_path(PROF_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDA_RUNTIME_INCLUDE_DIR})
if(PROF_NVTX3_INCLUDE_DIR)
  target_include_directories(fake_cuda_app PRIVATE ${PROF_NVTX3_INCLUDE_DIR})
  target_compile_definitions(fake_cuda_app PRIVATE FAKE_HAVE_NVTX3)
  # What a torch operator's NVTX range costs its thread (test/bench/README).
  add_executable(bench_nvtx_cost ${PROJECT_SOURCE_DIR}/test/bench/cuda/nvtx_cost.c)
  set_target_properties(bench_nvtx_cost PROPERTIES OUTPUT_NAME nvtx_cost
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bench)
  target_include_directories(bench_nvtx_cost PRIVATE ${PROF_NVTX3_INCLUDE_DIR})
  target_link_libraries(bench_nvtx_cost PRIVATE prof_tx ${CMAKE_DL_LIBS})
  add_dependencies(bench_nvtx_cost test_fake_cupti)
endif()
add_dependencies(fake_cuda_app test_fake_cupti)
add_test(NAME e2e.test_cuda_fake COMMAND ${PROF_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/e2e_fake_cuda.py)
set_tests_properties(e2e.test_cuda_fake PROPERTIES TIMEOUT 300
  ENVIRONMENT "PROF_BIN=${PROF_OUT}/bin/prof;PROF_BUILD=${PROF_OUT};PROF_TEST_TMP=${CMAKE_BINARY_DIR}/test/tmp;PROF_FAKE_CUDA_APP=$<TARGET_FILE:fake_cuda_app>;PROF_FAKE_CUPTI=$<TARGET_FILE:test_fake_cupti>;PROF_TX_LIB=$<TARGET_FILE:prof_tx>")

# The converter's cost per record (test/bench/README), run by hand.
add_executable(bench_convert_cost ${PROJECT_SOURCE_DIR}/test/bench/cuda/convert_cost.c ${CUDA_PURE})
set_target_properties(bench_convert_cost PROPERTIES OUTPUT_NAME convert_cost
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bench)
target_include_directories(bench_convert_cost PRIVATE ${CUPTI_INCLUDE_DIR} ${CUDA_RUNTIME_INCLUDE_DIR})
target_link_libraries(bench_convert_cost PRIVATE prof_platform prof_core ${CMAKE_DL_LIBS})
