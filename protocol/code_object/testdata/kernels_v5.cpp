// Kernels built by clang-15 straight for amdgcn (no HIP headers, no device
// libraries) as code object v5, and by sid's clang 21 as v6
// (make_v6_objects.sh), for inspect_agreement: explicit arguments of several
// kinds and uses of the dispatch geometry, which v5 and v6 pass as hidden
// arguments (block counts, group sizes, remainders, offsets).
typedef unsigned int uint32_t;

extern "C" __attribute__((amdgpu_kernel)) void scale(float* out, const float* in, float factor, uint32_t n) {
  const uint32_t i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
                     __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = in[i] * factor;
}

extern "C" __attribute__((amdgpu_kernel)) void fill2d(int* out, int value, uint32_t pitch) {
  const uint32_t x = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
                     __builtin_amdgcn_workitem_id_x();
  const uint32_t y = __builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y() +
                     __builtin_amdgcn_workitem_id_y();
  out[y * pitch + x] = value + static_cast<int>(__builtin_amdgcn_grid_size_x());
}

struct Pair {
  double a;
  char tag;
};

extern "C" __attribute__((amdgpu_kernel)) void by_struct(Pair p, double* out) { *out = p.a + p.tag; }
