// Replays files (or every regular file of directories) given on the command
// line through LLVMFuzzerTestOneInput: the fuzz target's corpus as a plain
// test under g++, which has no libFuzzer. Exits 1 if an argument is
// unreadable or no input was run; a bug in the target traps.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Exactly sized heap copy, so sanitizers see reads past the end.
  auto copy = std::make_unique<uint8_t[]>(data.size() + (data.empty() ? 1 : 0));
  std::copy(data.begin(), data.end(), copy.get());
  LLVMFuzzerTestOneInput(copy.get(), data.size());
  // Every prefix of small inputs, too: truncation is the commonest damage.
  if (data.size() <= 16384) {
    for (size_t n = 0; n < data.size(); n += 1 + n / 64) {
      auto prefix = std::make_unique<uint8_t[]>(n + 1);
      std::copy(data.begin(), data.begin() + n, prefix.get());
      LLVMFuzzerTestOneInput(prefix.get(), n);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
        if (!entry.is_regular_file()) continue;
        if (!RunFile(entry.path())) {
          std::fprintf(stderr, "cannot read %s\n", entry.path().c_str());
          return 1;
        }
        ++runs;
      }
    } else if (RunFile(arg)) {
      ++runs;
    } else {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 1;
    }
  }
  std::printf("ran %zu inputs (and their prefixes)\n", runs);
  return runs == 0 ? 1 : 0;
}
