#include "core/tar_file.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace np {
namespace {

constexpr size_t kBlock = 512;
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

// A NUL-padded text field.
absl::string_view TextField(absl::string_view field) { return field.substr(0, field.find('\0')); }

// A member's name as compared: without a leading "./" and a trailing "/".
std::string CleanName(absl::string_view name) {
  while (absl::ConsumePrefix(&name, "./")) {
  }
  while (absl::ConsumeSuffix(&name, "/")) {
  }
  return std::string(name);
}

// What PAX records ("LENGTH key=value\n") say of the next member.
struct Pax {
  std::optional<uint64_t> size;
  std::optional<std::string> path;
};

// False when a record is malformed.
bool ReadPax(absl::string_view records, Pax* pax) {
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
    const absl::string_view key = record.substr(0, equals);
    const absl::string_view value = record.substr(equals + 1);
    if (key == "size") {
      uint64_t size = 0;
      if (!absl::SimpleAtoi(value, &size)) return false;
      pax->size = size;
    } else if (key == "path") {
      pax->path = std::string(value);
    }
    records.remove_prefix(length);
  }
  return true;
}

// A member's name: a pax `path`, else a GNU long name, else the header's own
// (with its ustar prefix).
std::string MemberName(absl::string_view header, const Pax& pax,
                       const std::optional<std::string>& gnu_long_name) {
  if (pax.path.has_value()) return *pax.path;
  if (gnu_long_name.has_value()) return *gnu_long_name;
  const absl::string_view prefix = TextField(header.substr(345, 155));
  const absl::string_view base = TextField(header.substr(0, 100));
  const bool ustar = header.substr(257, 5) == "ustar";
  return ustar && !prefix.empty() ? absl::StrCat(prefix, "/", base) : std::string(base);
}

}  // namespace

TarFile FindTarFile(absl::string_view archive, absl::string_view name, size_t max_bytes) {
  TarFile out;
  const std::string wanted = CleanName(name);
  Pax pax;                                   // For the next member only.
  std::optional<std::string> gnu_long_name;  // Likewise.
  size_t at = 0;
  // Every header consumes a block, so this ends.
  while (true) {
    if (archive.size() < kBlock || at > archive.size() - kBlock) return out;
    const absl::string_view header = archive.substr(at, kBlock);
    if (AllZero(header)) {
      out.kind = TarFile::Kind::kMissing;
      return out;
    }
    if (!ChecksumOk(header)) return out;
    const std::optional<uint64_t> header_size = NumericField(header.substr(124, 12));
    if (!header_size.has_value()) return out;
    const char type = header[156];
    at += kBlock;
    const uint64_t left = archive.size() - at;
    const bool extension = type == 'x' || type == 'g' || type == 'L' || type == 'K';
    // Links, devices, directories and FIFOs carry no data.
    const bool has_data = extension || type == '0' || type == '\0' || type == '7';
    const uint64_t size = extension ? *header_size : pax.size.value_or(*header_size);
    if (extension) {
      if (size > left) return out;
      const absl::string_view data = archive.substr(at, size);
      if (type == 'x' && !ReadPax(data, &pax)) return out;
      if (type == 'L') gnu_long_name = std::string(TextField(data));
    } else {
      if (CleanName(MemberName(header, pax, gnu_long_name)) == wanted) {
        if (!has_data) {
          out.kind = TarFile::Kind::kNotRegular;
        } else if (size > max_bytes) {
          out.kind = TarFile::Kind::kTooLarge;
        } else if (size <= left) {
          out.kind = TarFile::Kind::kRegular;
          out.content = std::string(archive.substr(at, size));
        }
        return out;
      }
      pax = Pax{};
      gnu_long_name.reset();
    }
    if (!has_data) continue;
    // Padded to a whole block; a cut-short archive fails the next header.
    if (size > left) return out;
    const uint64_t padded = (size + kBlock - 1) / kBlock * kBlock;
    at += padded > left ? left : padded;
  }
}

}  // namespace np
