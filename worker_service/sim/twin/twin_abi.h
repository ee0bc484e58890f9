/* Twin ABI (version HIPR_TWIN_ABI_VERSION): the plain-C contract between a
 * kernel twin library (a host shared object built from a program's own .hip
 * source by twin_rewrite.py + hipr_twin_prelude.h, see
 * cmake/HiprSimTwin.cmake) and the sim device's executor in the worker
 * (twin_catalog.h, kernel_runner.h).
 *
 * What a twin exports. Exactly one default-visibility symbol,
 * HIPR_TWIN_ENTRY_SYMBOL, a function returning a static module descriptor.
 * Everything else in a twin is hidden. A twin has no static initialisers:
 * dlopen runs none of the program's code (host code is never part of a
 * twin), so calling the entry is safe before any check.
 *
 * How the sim finds a twin. A twin for the code object whose SHA-256 is
 * HEX (64 lowercase hex digits, the hash of the gfx90a ELF entry exactly as
 * in the fat binary) is the file `<dir>/HEX.so` in one of the directories
 * given to the worker (--sim-kernels DIR, several allowed, searched in
 * order). The name is the whole index: no other twin's code runs to find
 * one. The descriptor repeats the hash; the sim refuses a file whose
 * recorded hash differs from the name it was opened by.
 *
 * Threads of a launch. Each GPU thread is one call of a kernel's
 * run_thread() on a fiber; all fibers of one block run on one OS thread and
 * never migrate, so a twin's `static thread_local` storage is per block
 * (that is how __shared__ is implemented). In a cooperative launch every
 * block of the grid has an OS thread of its own at once (all resident, as a
 * GPU's cooperative launch guarantees), so a grid-wide barrier can open. Twin code reaches its thread's
 * context through the twin's own thread_local slot (current_thread()): the
 * executor writes the running fiber's HiprTwinThread* into the slot of the
 * OS thread before every switch into a fiber. A fiber keeps one context for
 * its whole life, so twin code may cache the pointer across calls.
 *
 * Versioning. abi_version is the first field and never moves; the executor
 * reads it before anything else and refuses a version it does not speak.
 * Any change to the layouts below bumps HIPR_TWIN_ABI_VERSION.
 */
#ifndef HIPR_WORKER_SERVICE_SIM_TWIN_TWIN_ABI_H_
#define HIPR_WORKER_SERVICE_SIM_TWIN_TWIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIPR_TWIN_ABI_VERSION 3u
/* Version 1 lacked HiprTwinServices::warp_meet, version 2 grid_sync and
 * HiprTwinThread::cooperative; the executor still runs such twins (they
 * never call or read them). */
#define HIPR_TWIN_ABI_OLDEST_VERSION 1u
/* Lanes of a wavefront (gfx9: 64): threads flat_thread_id / 64 of a block
 * form one wavefront, lane flat_thread_id % 64. */
#define HIPR_TWIN_WAVEFRONT_SIZE 64u
#define HIPR_TWIN_ENTRY_SYMBOL "hipr_twin_module"

typedef struct HiprTwinDim3 {
  uint32_t x, y, z;
} HiprTwinDim3;

typedef struct HiprTwinThread HiprTwinThread;

/* A texture object on the sim: the hipTextureObject_t a kernel receives is
 * the device address of one of these, which the sim writes when the client
 * creates the texture (SimDevice::CreateTexture, from the same HIP
 * descriptions the `hip` device hands the runtime, texture_desc.h). Twin
 * code samples through it (hipr_twin_texture.h). Enums hold HIP's numbers. */
#define HIPR_TWIN_TEXTURE_MAGIC 0x58455448u /* "HTEX" */
typedef struct HiprTwinTexture {
  uint32_t magic;
  uint32_t channels;     /* 1, 2 or 4. */
  uint32_t channel_bits; /* 8, 16 or 32, every channel alike. */
  int32_t channel_kind;  /* hipChannelFormatKind: signed 0, unsigned 1, float 2. */
  uint64_t address;      /* Element (0, 0). */
  uint64_t pitch;        /* Bytes from a row to the next. */
  uint64_t width;        /* Elements in a row. */
  uint64_t height;       /* Rows (1 for linear memory). */
  int32_t address_mode[3]; /* hipTextureAddressMode: wrap 0, clamp 1, mirror 2, border 3. */
  int32_t filter_mode;     /* Point 0, linear 1. */
  int32_t read_mode;       /* Element type 0, normalized float 1. */
  int32_t normalized_coords;
  float border_color[4];
} HiprTwinTexture;

/* Executor services twin code calls from inside a thread (a fiber). */
typedef struct HiprTwinServices {
  /* __syncthreads: returns once every thread of the caller's block that has
   * not exited has arrived. Returns how many of them passed a nonzero
   * `predicate` (for __syncthreads_count/_and/_or). */
  uint32_t (*barrier)(const HiprTwinThread* self, int predicate);
  /* Device printf: appends `size` bytes of formatted text to the launch's
   * output, which the sim hands to the client. Thread-safe. */
  void (*write_output)(const HiprTwinThread* self, const char* text, size_t size);
  /* A warp-level operation (shuffle, vote): the lanes of the caller's
   * wavefront meet here, as they execute one instruction on a GPU. The
   * caller offers `value` at call site `site` (any number naming the source
   * location) and waits until every other lane of its wavefront that has
   * not exited is waiting too (at a warp operation or at __syncthreads);
   * the lanes waiting at the lowest site then go on together, the others
   * wait for their own turn (divergent paths run one after the other, as a
   * GPU runs them). The prelude numbers a site by its source line, then
   * column (hipr_twin_warp.h), so that in structured code the operation in
   * a divergent branch runs before the one where the lanes reconverge. Returns the mask of those lanes
   * (bit = lane) and points *values at the 64 values they offered
   * (entries of other lanes are 0); valid until the caller's next warp
   * operation. Since ABI version 2. */
  uint64_t (*warp_meet)(const HiprTwinThread* self, uint64_t site, uint64_t value, const uint64_t** values);
  /* grid_group::sync(): returns once every thread of the grid that has not
   * exited has arrived (a block whose threads have all exited no longer
   * counts), and is a full memory fence: what any thread of the grid wrote
   * before it is visible to every thread after it. Only in a cooperative
   * launch (HiprTwinThread::cooperative); elsewhere the caller never returns:
   * the executor stops the kernel and fails the launch with a message naming
   * it (on a GPU the barrier is undefined there, and hangs). Since ABI
   * version 3. */
  void (*grid_sync)(const HiprTwinThread* self);
} HiprTwinServices;

/* One GPU thread's view of its launch. Owned by the executor; valid while
 * the thread runs. Twin code must treat it as read-only. */
struct HiprTwinThread {
  HiprTwinDim3 thread_idx;
  HiprTwinDim3 block_idx;
  HiprTwinDim3 block_dim;
  HiprTwinDim3 grid_dim;
  void* dynamic_shared;           /* The block's dynamic shared memory, 16-byte aligned. */
  uint32_t dynamic_shared_bytes;  /* Its size (the launch's sharedMemBytes). */
  uint32_t flat_thread_id;        /* x + y*bx + z*bx*by. */
  /* Device addresses of this module instance's variables, in the order of
   * HiprTwinModule::variables (bound by the sim before any launch). */
  void* const* variables;
  const HiprTwinServices* services;
  void* executor; /* Opaque to twin code. */
  /* Nonzero in a cooperative launch (hipLaunchCooperativeKernel and the
   * like): grid_group::is_valid(), and grid_sync may be called. Since ABI
   * version 3 (appended: older twins never read it). */
  uint32_t cooperative;
  uint32_t reserved;
};

/* Where an explicit kernel argument sits in the kernarg buffer, computed by
 * the host compiler from the C++ parameter types: each argument at the next
 * offset aligned to alignof(T), sizeof(T) bytes. The sim compares this with
 * the code object's metadata (explicit args only) before it uses a twin. */
typedef struct HiprTwinArg {
  uint32_t offset;
  uint32_t size;
} HiprTwinArg;

typedef struct HiprTwinKernel {
  const char* name; /* Mangled, exactly as ".name" in the code object metadata. */
  /* Runs ONE thread of the kernel: unpacks the explicit arguments from
   * `kernarg` (at args[i].offset) and calls the kernel. Reads its context
   * through the module's current_thread() slot. */
  void (*run_thread)(const uint8_t* kernarg);
  const void* function; /* The kernel function itself (for symbolizers and debuggers). */
  uint32_t arg_count;
  const HiprTwinArg* args;
} HiprTwinKernel;

/* A __device__ or __constant__ variable the code object's symbol table
 * lists. The sim allocates `size` bytes of device memory per loaded module,
 * copies `initial_bytes` there and passes the address to the module's
 * threads through HiprTwinThread::variables. */
typedef struct HiprTwinVariable {
  const char* name; /* As in the code object's symbol table (mangled if namespaced). */
  uint64_t size;
  const void* initial_bytes; /* `size` bytes. */
} HiprTwinVariable;

typedef struct HiprTwinModule {
  uint32_t abi_version; /* HIPR_TWIN_ABI_VERSION; always first. */
  uint32_t kernel_count;
  uint32_t variable_count;
  uint32_t reserved;
  const char* code_object_sha256; /* 64 lowercase hex digits. */
  const char* source;             /* The .hip file it was built from (informational). */
  const HiprTwinKernel* kernels;
  const HiprTwinVariable* variables;
  /* The address of the calling OS thread's current-thread slot in this
   * twin. Stable per OS thread. */
  const HiprTwinThread** (*current_thread)(void);
} HiprTwinModule;

typedef const HiprTwinModule* (*HiprTwinEntryFn)(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIPR_WORKER_SERVICE_SIM_TWIN_TWIN_ABI_H_ */
