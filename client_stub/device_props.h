// Device properties and attributes of HIP 5.2, answered from the
// msg::DeviceInfo the worker sent in the hello (fetched once per session).
//
// A field or attribute is filled when DeviceInfo carries its source, or when
// the HIP runtime itself sets a fixed value for every AMD device (ROCm/clr
// ihipGetDeviceProperties: computeMode 0, concurrentKernels 1,
// canMapHostMemory 1, kernelExecTimeoutEnabled 0, the hipDeviceArch_t
// feature bits). Everything else is zero in hipDeviceProp_t, and
// hipErrorInvalidValue from DeviceAttribute (the caller logs it once).
//
// Pure functions; thread-safe.
#pragma once

#include <hip/hip_runtime_api.h>

#include "client_stub/device_prop_r0600.h"
#include "protocol/messages.h"

namespace hipr::client {

// Fills every field of `*prop` (5.2 layout, or 6.x's R0600 one); the rest is
// zeroed.
void FillDeviceProp(const msg::DeviceInfo& info, hipDeviceProp_t* prop);
void FillDeviceProp(const msg::DeviceInfo& info, DevicePropR0600* prop);

// hipDeviceGetAttribute for one device: hipSuccess and *value, or
// hipErrorInvalidValue (nothing written) for an attribute with no source.
hipError_t DeviceAttribute(const msg::DeviceInfo& info, hipDeviceAttribute_t attr, int* value);

// hipChooseDevice's rule (clr ihipChooseDevice): among devices meeting every
// non-zero requested property, the one meeting the most; 0 when none.
int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const hipDeviceProp_t& wanted);
int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const DevicePropR0600& wanted);

}  // namespace hipr::client
