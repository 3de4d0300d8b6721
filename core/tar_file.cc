#include "core/tar_file.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/numbers.h"

namespace np {
namespace {

constexpr size_t kBlock = 512;
// Extension headers (PAX, GNU long names) allowed before the file itself.
constexpr int kMaxHeaders = 8;
constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// A numeric header field: octal digits between optional leading spaces and
// NUL or space padding, or GNU's base-256 (the first byte's high bit set),
// saturated past 64 bits (too large either way); nullopt when malformed.
std::optional<uint64_t> NumericField(absl::string_view field) {
  if (field.empty()) return std::nullopt;
  if ((static_cast<unsigned char>(field[0]) & 0x80) != 0) {
    // 0xff starts a negative number.
    if (static_cast<unsigned char>(field[0]) == 0xff) return std::nullopt;
    uint64_t value = static_cast<unsigned char>(field[0]) & 0x7f;
    for (size_t i = 1; i < field.size(); ++i) {
      if (value > (kSaturated >> 8)) return kSaturated;
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    }
    return value;
  }
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  uint64_t value = 0;
  bool any = false;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (value > (kSaturated >> 3)) return kSaturated;
    value = value * 8 + static_cast<uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < field.size(); ++i) {
    if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
  }
  if (!any) return std::nullopt;
  return value;
}

// The header's checksum: the unsigned sum of its bytes with the checksum
// field itself counted as spaces.
bool ChecksumOk(absl::string_view header) {
  std::optional<uint64_t> stored = NumericField(header.substr(148, 8));
  if (!stored.has_value()) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
  }
  return sum == *stored;
}

bool AllZero(absl::string_view block) {
  for (char c : block) {
    if (c != '\0') return false;
  }
  return true;
}

// PAX records "LENGTH key=value\n": the value of `size` into `size`, if
// there is one. False when a record is malformed.
bool ReadPaxSize(absl::string_view records, std::optional<uint64_t>* size) {
  while (!records.empty()) {
    const size_t space = records.find(' ');
    uint64_t length = 0;
    if (space == absl::string_view::npos || !absl::SimpleAtoi(records.substr(0, space), &length) ||
        length <= space + 1 || length > records.size()) {
      return false;
    }
    absl::string_view record = records.substr(space + 1, length - space - 1);
    if (record.back() != '\n') return false;
    record.remove_suffix(1);
    const size_t equals = record.find('=');
    if (equals == absl::string_view::npos) return false;
    if (record.substr(0, equals) == "size") {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(record.substr(equals + 1), &value)) return false;
      *size = value;
    }
    records.remove_prefix(length);
  }
  return true;
}

}  // namespace

TarFile FirstTarFile(absl::string_view archive, size_t max_bytes) {
  TarFile out;
  std::optional<uint64_t> pax_size;
  size_t at = 0;
  for (int headers = 0; headers < kMaxHeaders; ++headers) {
    if (archive.size() < kBlock || at > archive.size() - kBlock) return out;
    const absl::string_view header = archive.substr(at, kBlock);
    // The end-of-archive marker before any file.
    if (AllZero(header) || !ChecksumOk(header)) return out;
    const std::optional<uint64_t> size = NumericField(header.substr(124, 12));
    if (!size.has_value()) return out;
    const char type = header[156];
    at += kBlock;
    const uint64_t left = archive.size() - at;
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (*size > left) return out;
      if (type == 'x' && !ReadPaxSize(archive.substr(at, *size), &pax_size)) return out;
      // Padded to a whole block; a cut-short padding fails the next header.
      const uint64_t padded = (*size + kBlock - 1) / kBlock * kBlock;
      at += padded > left ? left : padded;
      continue;
    }
    // '0', and '\0' from old writers, is a regular file; '7' a contiguous one.
    if (type != '0' && type != '\0' && type != '7') {
      out.kind = TarFile::Kind::kNotRegular;
      return out;
    }
    const uint64_t file_size = pax_size.value_or(*size);
    if (file_size > max_bytes) {
      out.kind = TarFile::Kind::kTooLarge;
      return out;
    }
    if (file_size > left) return out;
    out.kind = TarFile::Kind::kRegular;
    out.content = std::string(archive.substr(at, file_size));
    return out;
  }
  return out;
}

}  // namespace np
