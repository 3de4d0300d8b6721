// The one file of a copy-out archive (docker cp / podman cp to stdout),
// which np-exec reads an image's passwd and group from.
#include "core/tar_file.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace np {
namespace {

// Writes `value` at `at` without changing the header's length.
void Put(std::string& h, size_t at, const std::string& value) {
  h.replace(at, value.size(), value);
}

// A ustar header for `name` of `type` and `size`, as Go's archive/tar (the
// engines' writer) lays it out, with a correct checksum unless `bad_sum`.
std::string Header(const std::string& name, char type, size_t size, bool bad_sum = false) {
  std::string h(512, '\0');
  Put(h, 0, name.substr(0, 100));
  Put(h, 100, "0000644");
  Put(h, 108, "0000000");
  Put(h, 116, "0000000");
  char size_field[13];
  std::snprintf(size_field, sizeof(size_field), "%011zo", size);
  Put(h, 124, std::string(size_field, 11));
  Put(h, 136, "15303540137");
  h[156] = type;
  Put(h, 257,
      std::string("ustar\0"
                  "00",
                  8));
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  }
  if (bad_sum) ++sum;
  char sum_field[9];
  std::snprintf(sum_field, sizeof(sum_field), "%06o", sum);
  Put(h, 148, std::string(sum_field, 6) + '\0' + ' ');
  return h;
}

std::string Padded(const std::string& data) {
  return data + std::string((512 - data.size() % 512) % 512, '\0');
}

std::string Archive(const std::string& name, char type, const std::string& data) {
  return Header(name, type, data.size()) + Padded(data) + std::string(1024, '\0');
}

// One PAX record, "LENGTH key=value\n", LENGTH counting itself.
std::string PaxRecord(const std::string& key, const std::string& value) {
  const std::string body = " " + key + "=" + value + "\n";
  size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

constexpr char kPasswd[] = "root:x:0:0:root:/root:/bin/sh\nnpimg:x:4242:4242::/:/bin/false\n";

TEST(TarFileTest, ReadsTheRegularFile) {
  TarFile file = FirstTarFile(Archive("passwd", '0', kPasswd), 1 << 20);
  EXPECT_EQ(file.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(file.content, kPasswd);
  // Old writers' '\0' type is a regular file too; so is an empty one.
  EXPECT_EQ(FirstTarFile(Archive("passwd", '\0', kPasswd), 1 << 20).content, kPasswd);
  TarFile empty = FirstTarFile(Archive("passwd", '0', ""), 1 << 20);
  EXPECT_EQ(empty.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(empty.content, "");
}

// A link in the image is copied as a link (never followed): not a file.
TEST(TarFileTest, ALinkOrDirectoryIsNotRegular) {
  for (char type : {'1', '2', '3', '4', '5', '6'}) {
    EXPECT_EQ(FirstTarFile(Archive("passwd", type, ""), 1 << 20).kind, TarFile::Kind::kNotRegular)
        << type;
  }
}

TEST(TarFileTest, OverTheCapIsTooLargeEvenWhenCutShort) {
  const std::string big(3000, 'a');
  EXPECT_EQ(FirstTarFile(Archive("passwd", '0', big), 2999).kind, TarFile::Kind::kTooLarge);
  EXPECT_EQ(FirstTarFile(Archive("passwd", '0', big), 3000).kind, TarFile::Kind::kRegular);
  // The capture stopped after the header: the size alone decides.
  EXPECT_EQ(FirstTarFile(Header("passwd", '0', 5u << 20), 1 << 20).kind, TarFile::Kind::kTooLarge);
}

TEST(TarFileTest, MalformedArchivesAreMalformed) {
  const std::string good = Archive("passwd", '0', kPasswd);
  for (const std::string& bad :
       {std::string(), std::string("not a tar"), std::string(1536, '\0'), good.substr(0, 511),
        good.substr(0, 520), Header("passwd", '0', 10, /*bad_sum=*/true) + Padded("0123456789"),
        std::string(512, 'x')}) {
    EXPECT_EQ(FirstTarFile(bad, 1 << 20).kind, TarFile::Kind::kMalformed) << bad.size();
  }
  // A size field with a stray character.
  std::string h = Header("passwd", '0', 10);
  h[130] = 'z';
  EXPECT_EQ(FirstTarFile(h + Padded("0123456789"), 1 << 20).kind, TarFile::Kind::kMalformed);
}

// A PAX extended header before the file (Go writes one for long names or
// large sizes): its `size` overrides the header's.
TEST(TarFileTest, PaxHeadersAreReadAndTheirSizeWins) {
  const std::string data = "root:x:0:0::/:/bin/sh\n";
  const std::string records =
      PaxRecord("path", "etc/some/long/passwd") + PaxRecord("size", std::to_string(data.size()));
  const std::string pax = Header("PaxHeaders/passwd", 'x', records.size()) + Padded(records);
  // The ustar header's own size says 0.
  TarFile file = FirstTarFile(pax + Header("passwd", '0', 0) + Padded(data), 1 << 20);
  EXPECT_EQ(file.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(file.content, data);
  // A PAX size past the cap.
  const std::string huge = PaxRecord("size", "99999999");
  EXPECT_EQ(
      FirstTarFile(Header("x", 'x', huge.size()) + Padded(huge) + Header("passwd", '0', 0), 1 << 20)
          .kind,
      TarFile::Kind::kTooLarge);
  // Broken records.
  for (const std::string& broken : {std::string("5 a=b\n"), std::string("99 size=1\n"),
                                    std::string("x size=1\n"), std::string("9 sizeX1\n")}) {
    EXPECT_EQ(FirstTarFile(Header("x", 'x', broken.size()) + Padded(broken) +
                               Header("passwd", '0', 1) + Padded("a"),
                           1 << 20)
                  .kind,
              TarFile::Kind::kMalformed)
        << broken;
  }
  // A GNU long name before the file is skipped.
  const std::string name(150, 'n');
  EXPECT_EQ(FirstTarFile(Header("././@LongLink", 'L', name.size()) + Padded(name) +
                             Archive("passwd", '0', data),
                         1 << 20)
                .content,
            data);
}

// Endless extension headers end in kMalformed, not a loop.
TEST(TarFileTest, ChainedExtensionHeadersAreBounded) {
  std::string archive;
  for (int i = 0; i < 20; ++i) archive += Header("x", 'g', 0);
  archive += Archive("passwd", '0', "a");
  EXPECT_EQ(FirstTarFile(archive, 1 << 20).kind, TarFile::Kind::kMalformed);
}

// GNU base-256 sizes.
TEST(TarFileTest, Base256SizeIsRead) {
  std::string h = Header("passwd", '0', 0);
  std::string field(12, '\0');
  field[0] = static_cast<char>(0x80);
  field[11] = 3;
  Put(h, 124, field);
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  }
  char sum_field[9];
  std::snprintf(sum_field, sizeof(sum_field), "%06o", sum);
  Put(h, 148, std::string(sum_field, 6) + '\0' + ' ');
  TarFile file = FirstTarFile(h + Padded("abc"), 1 << 20);
  EXPECT_EQ(file.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(file.content, "abc");
}

}  // namespace
}  // namespace np
