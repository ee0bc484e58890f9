#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "protocol/rdma/verbs_double/verbs_double.h"

namespace hipr::verbs_double {

Fabric::Fabric() {
  char tmpl[] = "/dev/shm/hipr-verbs-double-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("verbs double: cannot create a fabric directory in /dev/shm");
  dir_ = tmpl;
  if (const char* prev = std::getenv(kFabricEnv)) {
    had_previous_ = true;
    previous_ = prev;
  }
  setenv(kFabricEnv, dir_.c_str(), 1);
}

Fabric::~Fabric() {
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir_ + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir_.c_str());
  if (had_previous_)
    setenv(kFabricEnv, previous_.c_str(), 1);
  else
    unsetenv(kFabricEnv);
}

int Fabric::FileCount() const {
  int n = 0;
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") ++n;
    }
    closedir(d);
  }
  return n;
}

}  // namespace hipr::verbs_double
