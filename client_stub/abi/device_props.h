// Device properties and attributes, answered from the msg::DeviceInfo the
// worker sent in the hello (fetched once per session), as ROCm's runtime
// (clr's ihipGetDeviceProperties and hipDeviceGetAttribute, ROCm 6.2 and
// later) answers them: the typed DeviceInfo fields and the worker's named
// properties (protocol/device_properties.h) fill both hipDeviceProp_t
// layouts; the rest is what clr sets for every AMD device, or what a GPU on
// another host is to this process (not integrated, no host-native atomics,
// no access to its pageable or managed memory from here).
//
// hipDeviceGetAttribute numbers never changed meaning between majors; an
// attribute is answered when the caller's major has it (89 and 10017 from
// 5.3, 90-91 from 6.x, 92 and 10018-10020 from 7.x, with 7.1's numbering:
// 10019 is MaxAvailableVgprsPerThread, 10020 PciChipId) and clr answers it;
// everything clr refuses in every release, and a fact the worker did not
// send, is hipErrorInvalidValue (the caller logs it once).
//
// Pure functions; thread-safe.
#pragma once

#include <hip/hip_runtime_api.h>

#include "client_stub/abi/device_prop_r0600.h"
#include "protocol/device_properties.h"
#include "protocol/messages.h"

namespace hipr::client {

// Fills every field of `*prop` (5.2 layout, or 6.x's R0600 one); the rest is
// zeroed.
void FillDeviceProp(const msg::DeviceInfo& info, hipDeviceProp_t* prop);
void FillDeviceProp(const msg::DeviceInfo& info, DevicePropR0600* prop);

// Everything the property and attribute calls answer for one device,
// computed once (the session keeps one per device; filling a struct costs
// microseconds, an answer from it nanoseconds). Immutable.
struct DeviceAnswers {
  explicit DeviceAnswers(const msg::DeviceInfo& info);
  hipDeviceProp_t r0000;
  DevicePropR0600 r0600;
  msg::PropertyTable named;
};

// hipDeviceGetAttribute for one device and a caller of `major`: hipSuccess
// and *value, or hipErrorInvalidValue (nothing written). The HDP attributes
// write a (null) pointer, 8 bytes, as clr does.
hipError_t DeviceAttribute(const DeviceAnswers& device, int attr, int major, int* value);

// hipChooseDevice's rule (clr ihipChooseDevice): among devices meeting every
// non-zero requested property, the one meeting the most; 0 when none.
int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const hipDeviceProp_t& wanted);
int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const DevicePropR0600& wanted);

}  // namespace hipr::client
