# Test helpers: every test is a GoogleTest executable registered with CTest.
find_package(GTest REQUIRED)
include(GoogleTest)

# Where the shared fixtures live (models, golden captures, specs); never copied into the repo.
set(HEARTH_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH "Path to the shared fixtures")
# Cache for downloaded test inputs (npm packages), kept between runs: the environment's
# HEARTH_TEST_CACHE_DIR (as scripts/test.sh and fetch-test-data.sh use it), else <repo>/.cache.
if(DEFINED ENV{HEARTH_TEST_CACHE_DIR} AND NOT "$ENV{HEARTH_TEST_CACHE_DIR}" STREQUAL "")
  set(hearth_default_cache "$ENV{HEARTH_TEST_CACHE_DIR}")
else()
  set(hearth_default_cache "${PROJECT_SOURCE_DIR}/.cache")
endif()
set(HEARTH_TEST_CACHE_DIR "${hearth_default_cache}" CACHE PATH "Cache for fetched test inputs")

# hearth_add_test(name SOURCES ... DEPS ... [LABELS ...] [TIMEOUT s])
function(hearth_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE hearth_compile_options ${ARG_DEPS} hearth_test_support
                        GTest::gtest GTest::gtest_main)
  # Fixture paths are compiled into hearth_test_support (tests/CMakeLists.txt), so test
  # discovery and test runs agree; HEARTH_SHARED_DIR etc. in the environment override them.
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()
