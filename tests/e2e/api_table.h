// Table-driven API tests (api_table_*.hip): one row per hand-written HIP
// function of client_stub/abi/handwritten.txt that is remoted or answered
// locally. A row calls its function through the stub and asserts behaviour:
// a value read back, a state change observed, or the documented error for a
// bad argument; "did not crash" is not an assertion. Each passing row prints
// "api row passed: <symbol>"; the api_table scenario (kernel_scenarios.py)
// fails unless the rows of all programs cover every such function that
// tests/e2e/api_table_pending.txt does not list, and fails if a listed one
// has a row (the list only shrinks).
#pragma once

#include <stdio.h>

#include "common.h"

namespace e2e {

struct Row {
  const char* function;  // The exact exported symbol name.
  void (*check)();
};

// Runs every row with device 0 current; a failing check ends the program.
template <size_t N>
int RunRows(const char* program, const Row (&rows)[N]) {
  for (const Row& row : rows) {
    HIP_OK(hipSetDevice(0));
    row.check();
    printf("api row passed: %s\n", row.function);
    fflush(stdout);
  }
  return Finish(program);
}

}  // namespace e2e
