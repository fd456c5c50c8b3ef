//===- Device.h - where tensors live and programs run ---------------------===//
#ifndef SINTER_DEVICE_H
#define SINTER_DEVICE_H

#include "sinter/runtime/Device.h"

#include <source_location>
#include <string>
#include <string_view>

namespace sinter {

/// A device: the CPU, or one CUDA GPU by ordinal. A Device is a plain value,
/// the runtime's DeviceId (Note [One device identity] in
/// sinter/runtime/Device.h) with checks at the caller's line; naming a GPU
/// does not touch the driver. Use ensureAvailable() (or any operation that
/// runs on it) to find out whether it exists.
class Device {
public:
  using Kind = runtime::DeviceKind;

  /// The host CPU.
  static Device cpu() { return Device({Kind::Cpu, 0}); }
  /// CUDA device `index`. REQUIRES: index >= 0 (else throws sinter::Error).
  static Device cuda(int index = 0, std::source_location where = std::source_location::current());
  /// cuda(0) when a CUDA device is usable, otherwise cpu().
  static Device best();
  /// Parses "cpu", "cuda" or "cuda:N"; throws sinter::Error naming the text.
  static Device parse(std::string_view text,
                      std::source_location where = std::source_location::current());

  Kind kind() const { return id_.kind; }
  int index() const { return id_.index; }
  bool isCpu() const { return id_.kind == Kind::Cpu; }
  bool isCuda() const { return id_.kind == Kind::Cuda; }
  const runtime::DeviceId &id() const { return id_; }

  /// Whether the device exists on this machine (always true for the CPU).
  bool available() const;
  /// Throws sinter::Error, at the caller's line, when the device does not
  /// exist: the message gives the driver's reason or the number of devices.
  void ensureAvailable(std::source_location where = std::source_location::current()) const;

  /// "cpu" or "cuda:N".
  std::string toString() const { return id_.name(); }

  friend bool operator==(const Device &, const Device &) = default;

private:
  explicit Device(runtime::DeviceId id) : id_(id) {}

  runtime::DeviceId id_;
};

} // namespace sinter

#endif // SINTER_DEVICE_H
