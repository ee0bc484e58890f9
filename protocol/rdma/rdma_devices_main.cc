// hipr-rdma-devices: the RDMA devices libibverbs sees on this machine, with
// the state of their first port; what a worker's --rdma-device names. Exits
// 0 and says so when there are none (the usual case off RDMA hardware).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>

int main() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    // ENOSYS: the kernel has no RDMA support at all.
    if (errno == ENOSYS) {
      std::printf("no RDMA devices (this kernel has no RDMA support)\n");
      return 0;
    }
    std::perror("ibv_get_device_list");
    return 1;
  }
  if (n == 0) std::printf("no RDMA devices\n");
  for (int i = 0; i < n; ++i) {
    const char* name = ibv_get_device_name(list[i]);
    ibv_context* ctx = ibv_open_device(list[i]);
    if (ctx == nullptr) {
      std::printf("%s: cannot open\n", name);
      continue;
    }
    ibv_port_attr port{};
    if (ibv_query_port(ctx, 1, &port) == 0)
      std::printf("%s: port 1 %s, %s\n", name, ibv_port_state_str(port.state),
                  port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
    else
      std::printf("%s: port 1 unreadable\n", name);
    ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  return 0;
}
