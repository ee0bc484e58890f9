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

#include <elf.h>
#include <stdio.h>

#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace e2e {

struct Row {
  const char* function;  // The exact exported symbol name.
  void (*check)();
};

// Whether HIPR_E2E_SKIP_ROWS (comma-separated; the harness sets it for the
// chain, with each row's reason kept there) names `function`.
inline bool Skipped(const char* function) {
  const char* list = getenv("HIPR_E2E_SKIP_ROWS");
  if (list == nullptr) return false;
  const std::string all = std::string(",") + list + ",";
  return all.find(std::string(",") + function + ",") != std::string::npos;
}

// Runs every row with device 0 current; a failing check ends the program.
template <size_t N>
int RunRows(const char* program, const Row (&rows)[N]) {
  for (const Row& row : rows) {
    if (Skipped(row.function)) {
      printf("api row skipped: %s\n", row.function);
      continue;
    }
    HIP_OK(hipSetDevice(0));
    row.check();
    printf("api row passed: %s\n", row.function);
    fflush(stdout);
  }
  return Finish(program);
}


// This program's own offload bundle (its .hip_fatbin section, read from
// /proc/self/exe), loaded as a module: the same code object as the
// registered kernels, so the sim runs it with this file's twin.
inline std::vector<uint8_t> OwnFatBinary() {
  FILE* f = fopen("/proc/self/exe", "rb");
  CHECK(f != nullptr, "cannot open /proc/self/exe");
  std::vector<uint8_t> exe;
  uint8_t chunk[1 << 16];
  for (size_t got; (got = fread(chunk, 1, sizeof chunk, f)) > 0;) exe.insert(exe.end(), chunk, chunk + got);
  fclose(f);
  Elf64_Ehdr eh;
  CHECK(exe.size() > sizeof eh, "/proc/self/exe is %zu bytes", exe.size());
  memcpy(&eh, exe.data(), sizeof eh);
  CHECK(memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_shentsize == sizeof(Elf64_Shdr) &&
            eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) <= exe.size() && eh.e_shstrndx < eh.e_shnum,
        "/proc/self/exe is not a usable ELF file");
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    memcpy(&sh, exe.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  const Elf64_Shdr names = section(eh.e_shstrndx);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.sh_size) continue;
    const char* name = reinterpret_cast<const char*>(exe.data() + names.sh_offset + sh.sh_name);
    if (strcmp(name, ".hip_fatbin") != 0) continue;
    CHECK(sh.sh_offset + sh.sh_size <= exe.size(), ".hip_fatbin lies past the file's end");
    return std::vector<uint8_t>(exe.begin() + sh.sh_offset, exe.begin() + sh.sh_offset + sh.sh_size);
  }
  Fail(__FILE__, __LINE__, "no .hip_fatbin section in /proc/self/exe");
}

// The permissions /proc/self/maps lists for the mapping holding `p`.
inline std::string MappingPerms(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  FILE* f = fopen("/proc/self/maps", "r");
  CHECK(f != nullptr, "cannot read /proc/self/maps");
  char line[512];
  std::string perms = "none";
  while (fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo = 0, hi = 0;
    char p4[5] = {};
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p4) == 3 && a >= lo && a < hi) perms = p4;
  }
  fclose(f);
  return perms;
}

}  // namespace e2e
