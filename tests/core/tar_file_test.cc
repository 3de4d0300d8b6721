// Members of a copy-out archive (docker cp / podman cp of /etc to stdout),
// which np-exec reads an image's passwd and group from.
#include "core/tar_file.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace np {
namespace {

// Writes `value` at `at` without changing the header's length.
void Put(std::string& h, size_t at, const std::string& value) {
  h.replace(at, value.size(), value);
}

// The unsigned sum of a header's bytes, its checksum field counted as spaces.
unsigned Sum(const std::string& h) {
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  }
  return sum;
}

void Seal(std::string& h, unsigned sum) {
  char sum_field[9];
  std::snprintf(sum_field, sizeof(sum_field), "%06o", sum);
  Put(h, 148, std::string(sum_field, 6) + '\0' + ' ');
}

// Recomputes a header's checksum after a field changed.
void Reseal(std::string& h) { Seal(h, Sum(h)); }

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
  Seal(h, Sum(h) + (bad_sum ? 1 : 0));
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
constexpr char kGroup[] = "root:x:0:\n";

// The directory /etc as the engines copy it out: the directory, then its
// members in order.
std::string Etc(const std::string& passwd_entry) {
  return Header("etc/", '5', 0) + Header("etc/group", '0', strlen(kGroup)) + Padded(kGroup) +
         Header("etc/hostname", '0', 3) + Padded("box") + passwd_entry + Header("etc/zz", '0', 0) +
         std::string(1024, '\0');
}

TEST(TarFileTest, FindsEachMemberByName) {
  const std::string etc = Etc(Header("etc/passwd", '0', strlen(kPasswd)) + Padded(kPasswd));
  TarFile passwd = FindTarFile(etc, "etc/passwd", 1 << 20);
  EXPECT_EQ(passwd.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(passwd.content, kPasswd);
  TarFile group = FindTarFile(etc, "etc/group", 1 << 20);
  EXPECT_EQ(group.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(group.content, kGroup);
  EXPECT_EQ(FindTarFile(etc, "etc/shadow", 1 << 20).kind, TarFile::Kind::kMissing);
  // Old writers' '\0' type is a regular file too; "./" and a trailing "/"
  // do not matter; an empty file is a file.
  EXPECT_EQ(FindTarFile(Archive("./etc/passwd", '\0', kPasswd), "etc/passwd", 1 << 20).content,
            kPasswd);
  TarFile empty = FindTarFile(Archive("etc/passwd", '0', ""), "etc/passwd", 1 << 20);
  EXPECT_EQ(empty.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(empty.content, "");
  // Only the exact name: not a file of that base name elsewhere.
  EXPECT_EQ(FindTarFile(Archive("real/passwd", '0', kPasswd), "etc/passwd", 1 << 20).kind,
            TarFile::Kind::kMissing);
}

// A link in the image is copied as a link (never followed): not a file, and
// what it points at is not read in its place.
TEST(TarFileTest, ALinkOrDirectoryIsNotRegular) {
  for (char type : {'1', '2', '3', '4', '5', '6'}) {
    std::string link = Header("etc/passwd", type, 0);
    Put(link, 157, "real");
    Reseal(link);
    EXPECT_EQ(
        FindTarFile(Etc(link) + Archive("etc/real", '0', kPasswd), "etc/passwd", 1 << 20).kind,
        TarFile::Kind::kNotRegular)
        << type;
  }
}

TEST(TarFileTest, OverTheCapIsTooLargeEvenWhenCutShort) {
  const std::string big(3000, 'a');
  EXPECT_EQ(FindTarFile(Archive("etc/passwd", '0', big), "etc/passwd", 2999).kind,
            TarFile::Kind::kTooLarge);
  EXPECT_EQ(FindTarFile(Archive("etc/passwd", '0', big), "etc/passwd", 3000).kind,
            TarFile::Kind::kRegular);
  // The capture stopped after the header: the size alone decides.
  EXPECT_EQ(FindTarFile(Header("etc/passwd", '0', 5u << 20), "etc/passwd", 1 << 20).kind,
            TarFile::Kind::kTooLarge);
  // A member before it cut short: it cannot be told.
  EXPECT_EQ(
      FindTarFile(Header("etc/aaa", '0', 5000) + std::string(600, 'x'), "etc/passwd", 1 << 20).kind,
      TarFile::Kind::kMalformed);
}

TEST(TarFileTest, MalformedArchivesAreMalformed) {
  const std::string good = Archive("etc/passwd", '0', kPasswd);
  for (const std::string& bad :
       {std::string(), std::string("not a tar"), good.substr(0, 511), good.substr(0, 520),
        Header("etc/passwd", '0', 10, /*bad_sum=*/true) + Padded("0123456789"),
        std::string(512, 'x'), Header("etc/group", '0', 10) + Padded("0123456789")}) {
    EXPECT_EQ(FindTarFile(bad, "etc/passwd", 1 << 20).kind, TarFile::Kind::kMalformed)
        << bad.size();
  }
  EXPECT_EQ(FindTarFile(std::string(1536, '\0'), "etc/passwd", 1 << 20).kind,
            TarFile::Kind::kMissing);
  // A size field with a stray character.
  std::string h = Header("etc/passwd", '0', 10);
  h[130] = 'z';
  EXPECT_EQ(FindTarFile(h + Padded("0123456789"), "etc/passwd", 1 << 20).kind,
            TarFile::Kind::kMalformed);
}

// A PAX extended header before a member (Go writes one for long names or
// large sizes): its `path` names the member and its `size` overrides the
// header's; it applies to that member only.
TEST(TarFileTest, PaxHeadersNameAndSizeTheNextMember) {
  const std::string data = "root:x:0:0::/:/bin/sh\n";
  const std::string records =
      PaxRecord("path", "etc/passwd") + PaxRecord("size", std::to_string(data.size()));
  const std::string pax = Header("etc/PaxHeaders/x", 'x', records.size()) + Padded(records);
  // The ustar header's own name and size say something else.
  TarFile file =
      FindTarFile(pax + Header("etc/truncated-na", '0', 0) + Padded(data) + std::string(1024, '\0'),
                  "etc/passwd", 1 << 20);
  EXPECT_EQ(file.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(file.content, data);
  // The PAX path was that member's: the next is named by its own header.
  const std::string other = PaxRecord("path", "etc/other");
  EXPECT_EQ(FindTarFile(Header("x", 'x', other.size()) + Padded(other) + Header("etc/a", '0', 0) +
                            Archive("etc/passwd", '0', data),
                        "etc/passwd", 1 << 20)
                .content,
            data);
  // A PAX size past the cap.
  const std::string huge = PaxRecord("size", "99999999");
  EXPECT_EQ(FindTarFile(Header("x", 'x', huge.size()) + Padded(huge) + Header("etc/passwd", '0', 0),
                        "etc/passwd", 1 << 20)
                .kind,
            TarFile::Kind::kTooLarge);
  // Broken records.
  for (const std::string& broken : {std::string("5 a=b\n"), std::string("99 size=1\n"),
                                    std::string("x size=1\n"), std::string("9 sizeX1\n")}) {
    EXPECT_EQ(FindTarFile(Header("x", 'x', broken.size()) + Padded(broken) +
                              Header("etc/passwd", '0', 1) + Padded("a"),
                          "etc/passwd", 1 << 20)
                  .kind,
              TarFile::Kind::kMalformed)
        << broken;
  }
  // A GNU long name names the next member.
  const std::string long_dir(150, 'n');
  const std::string long_name = "etc/" + long_dir + "/passwd";
  EXPECT_EQ(
      FindTarFile(Header("././@LongLink", 'L', long_name.size() + 1) + Padded(long_name + '\0') +
                      Header("etc/nnnn", '0', data.size()) + Padded(data) + std::string(1024, '\0'),
                  long_name, 1 << 20)
          .content,
      data);
  // So does ustar's prefix field.
  std::string prefixed = Header("passwd", '0', data.size());
  Put(prefixed, 345, "etc");
  Reseal(prefixed);
  EXPECT_EQ(FindTarFile(prefixed + Padded(data), "etc/passwd", 1 << 20).content, data);
}

// GNU base-256 sizes.
TEST(TarFileTest, Base256SizeIsRead) {
  std::string h = Header("etc/passwd", '0', 0);
  std::string field(12, '\0');
  field[0] = static_cast<char>(0x80);
  field[11] = 3;
  Put(h, 124, field);
  Reseal(h);
  TarFile file = FindTarFile(h + Padded("abc"), "etc/passwd", 1 << 20);
  EXPECT_EQ(file.kind, TarFile::Kind::kRegular);
  EXPECT_EQ(file.content, "abc");
}

}  // namespace
}  // namespace np
