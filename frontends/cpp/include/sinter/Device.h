//===- Device.h - where tensors live and programs run ---------------------===//
#ifndef SINTER_DEVICE_H
#define SINTER_DEVICE_H

#include <source_location>
#include <string>
#include <string_view>

namespace sinter {

/// A device: the CPU, or one CUDA GPU by ordinal. A Device is a plain value;
/// naming a GPU does not touch the driver. Use ensureAvailable() (or any
/// operation that runs on it) to find out whether it exists.
class Device {
public:
  enum class Kind { cpu, cuda };

  /// The host CPU.
  static Device cpu() { return Device(Kind::cpu, 0); }
  /// CUDA device `index`. REQUIRES: index >= 0 (else throws sinter::Error).
  static Device cuda(int index = 0, std::source_location where = std::source_location::current());
  /// cuda(0) when a CUDA device is usable, otherwise cpu().
  static Device best();
  /// Parses "cpu", "cuda" or "cuda:N"; throws sinter::Error naming the text.
  static Device parse(std::string_view text,
                      std::source_location where = std::source_location::current());

  Kind kind() const { return kind_; }
  int index() const { return index_; }
  bool isCpu() const { return kind_ == Kind::cpu; }
  bool isCuda() const { return kind_ == Kind::cuda; }

  /// Whether the device exists on this machine (always true for the CPU).
  bool available() const;
  /// Throws sinter::Error, at the caller's line, when the device does not
  /// exist: the message gives the driver's reason or the number of devices.
  void ensureAvailable(std::source_location where = std::source_location::current()) const;

  /// "cpu" or "cuda:N".
  std::string toString() const;

  friend bool operator==(const Device &, const Device &) = default;

private:
  Device(Kind kind, int index) : kind_(kind), index_(index) {}

  Kind kind_;
  int index_;
};

} // namespace sinter

#endif // SINTER_DEVICE_H
