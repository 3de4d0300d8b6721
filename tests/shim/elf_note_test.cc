// np-exec's ELF note: found in the built binary and its copies, and in
// synthetic images of every class and byte order; anything malformed,
// truncated or over the bounds is simply not np-exec, and never read past
// the bounds.
#include "shim/elf_note.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

// One note as it sits in a segment.
struct Note {
  std::string name;  // Written with its NUL unless raw_namesz says otherwise.
  uint32_t type = kNpExecNoteType;
  std::string desc = std::string(4, '\1');
  int64_t raw_namesz = -1;  // Overrides namesz when >= 0.
};

// A minimal ELF image: header, program headers, then each note segment.
struct Image {
  bool is64 = true;
  bool big_endian = false;
  uint64_t align = 4;
  std::vector<std::vector<Note>> segments;
  int64_t phnum_override = -1;
  int64_t phentsize_override = -1;
  int64_t filesz_override = -1;
  int64_t offset_override = -1;
  size_t leading_loads = 0;  // PT_LOAD entries before the notes.

  void Put(std::string& out, uint64_t value, size_t width) const {
    for (size_t i = 0; i < width; ++i) {
      const size_t shift = big_endian ? 8 * (width - 1 - i) : 8 * i;
      out.push_back(static_cast<char>((value >> shift) & 0xff));
    }
  }
  static void Pad(std::string& out, size_t align) {
    while (out.size() % align != 0) out.push_back('\0');
  }

  std::string SegmentBytes(const std::vector<Note>& notes) const {
    std::string out;
    for (const Note& n : notes) {
      Put(out, n.raw_namesz >= 0 ? static_cast<uint64_t>(n.raw_namesz) : n.name.size() + 1, 4);
      Put(out, n.desc.size(), 4);
      Put(out, n.type, 4);
      out += n.name;
      out.push_back('\0');
      Pad(out, align);
      out += n.desc;
      Pad(out, align);
    }
    return out;
  }

  std::string Bytes() const {
    const size_t header = is64 ? 64 : 52;
    const size_t phent = is64 ? 56 : 32;
    const size_t word = is64 ? 8 : 4;
    const size_t count = leading_loads + segments.size();
    const size_t phentsize =
        phentsize_override >= 0 ? static_cast<size_t>(phentsize_override) : phent;
    std::vector<std::string> bodies;
    for (const auto& s : segments) bodies.push_back(SegmentBytes(s));
    std::string out =
        "\x7f"
        "ELF";
    out.push_back(is64 ? 2 : 1);
    out.push_back(big_endian ? 2 : 1);
    out.push_back(1);
    out.resize(16, '\0');
    Put(out, 2, 2);          // e_type EXEC
    Put(out, 62, 2);         // e_machine
    Put(out, 1, 4);          // e_version
    Put(out, 0, word);       // e_entry
    Put(out, header, word);  // e_phoff
    Put(out, 0, word);       // e_shoff
    Put(out, 0, 4);          // e_flags
    Put(out, header, 2);     // e_ehsize
    Put(out, phentsize, 2);
    Put(out, phnum_override >= 0 ? static_cast<uint64_t>(phnum_override) : count, 2);
    Put(out, 0, 2);
    Put(out, 0, 2);
    Put(out, 0, 2);
    EXPECT_EQ(out.size(), header);
    size_t data_at = header + count * phentsize;
    auto phdr = [&](uint32_t type, uint64_t offset, uint64_t size) {
      std::string p;
      Put(p, type, 4);
      if (is64) {
        Put(p, 4, 4);  // p_flags R
        Put(p, offset, 8);
        Put(p, 0, 8);
        Put(p, 0, 8);
        Put(p, size, 8);
        Put(p, size, 8);
        Put(p, align, 8);
      } else {
        Put(p, offset, 4);
        Put(p, 0, 4);
        Put(p, 0, 4);
        Put(p, size, 4);
        Put(p, size, 4);
        Put(p, 4, 4);
        Put(p, align, 4);
      }
      p.resize(phentsize, '\0');
      out += p;
    };
    for (size_t i = 0; i < leading_loads; ++i) phdr(1, 0, 0);
    for (const std::string& body : bodies) {
      phdr(4, offset_override >= 0 ? static_cast<uint64_t>(offset_override) : data_at,
           filesz_override >= 0 ? static_cast<uint64_t>(filesz_override) : body.size());
      data_at += body.size();
    }
    for (const std::string& body : bodies) out += body;
    return out;
  }
};

// Reads from a byte string, recording how much was asked for.
struct Reader {
  std::string bytes;
  size_t total_read = 0;
  size_t largest_read = 0;

  ReadAt Fn() {
    return [this](uint64_t offset, size_t length, std::string* out) {
      total_read += length;
      largest_read = std::max(largest_read, length);
      if (offset > bytes.size() || length > bytes.size() - offset) return false;
      *out = bytes.substr(offset, length);
      return true;
    };
  }
};

bool Find(const std::string& bytes) {
  Reader r{bytes};
  return FindNpExecNote(r.Fn());
}

Note NpExec() { return Note{"np-exec"}; }
Note Gnu() { return Note{"GNU", 3, std::string(20, 'b')}; }

TEST(ElfNoteTest, FoundInEveryClassAndByteOrder) {
  for (bool is64 : {true, false}) {
    for (bool big : {false, true}) {
      for (uint64_t align : {4, 8}) {
        Image image;
        image.is64 = is64;
        image.big_endian = big;
        image.align = align;
        image.segments = {{Gnu(), NpExec()}};
        EXPECT_TRUE(Find(image.Bytes())) << is64 << big << align;
      }
    }
  }
}

TEST(ElfNoteTest, FoundInALaterNoteSegmentBehindOtherHeaders) {
  Image image;
  image.leading_loads = 3;
  image.segments = {{Gnu()}, {Gnu(), Note{"stapsdt", 3}, NpExec()}};
  EXPECT_TRUE(Find(image.Bytes()));
}

TEST(ElfNoteTest, OtherNotesAreNotNpExec) {
  const std::vector<Note> others = {
      Gnu(),
      Note{"np-exec", kNpExecNoteType + 1},  // Right owner, another type.
      Note{"np-exe"},
      Note{"np-exec2"},
      Note{"NP-EXEC"},
      Note{"GNU", kNpExecNoteType},
      // The name without its NUL: namesz 7.
      Note{"np-exec", kNpExecNoteType, std::string(4, '\1'), 7},
  };
  for (const Note& note : others) {
    Image image;
    image.segments = {{note}};
    EXPECT_FALSE(Find(image.Bytes())) << note.name << " " << note.type;
  }
}

TEST(ElfNoteTest, MalformedImagesAreNotNpExec) {
  Image good;
  good.segments = {{NpExec()}};
  const std::string bytes = good.Bytes();
  ASSERT_TRUE(Find(bytes));

  std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"script", "#!/bin/sh\necho np-exec\n"},
      {"magic only",
       "\x7f"
       "ELF"},
      {"header cut", bytes.substr(0, 40)},
      {"table cut", bytes.substr(0, 64 + 20)},
      {"note cut", bytes.substr(0, bytes.size() - 6)},
  };
  std::string bad_class = bytes;
  bad_class[4] = 3;
  bad.push_back({"class 3", bad_class});
  std::string bad_data = bytes;
  bad_data[5] = 0;
  bad.push_back({"byte order 0", bad_data});
  // The note text anywhere but in a note segment does not count.
  bad.push_back({"text only", std::string("np-exec\0\1\0\0\0", 12)});
  for (const auto& [name, image] : bad) EXPECT_FALSE(Find(image)) << name;

  auto variant = [](auto change) {
    Image image;
    image.segments = {{NpExec()}};
    change(image);
    return image.Bytes();
  };
  EXPECT_FALSE(Find(variant([](Image& i) { i.phnum_override = 0; })));
  EXPECT_FALSE(Find(variant([](Image& i) { i.phnum_override = 0xffff; })));  // PN_XNUM
  EXPECT_FALSE(Find(variant([](Image& i) { i.phentsize_override = 16; })));
  EXPECT_FALSE(Find(variant([](Image& i) { i.phentsize_override = 4096; })));
  EXPECT_FALSE(Find(variant([](Image& i) { i.offset_override = 1u << 30; })));
  EXPECT_FALSE(Find(variant([](Image& i) { i.filesz_override = 0; })));
  EXPECT_FALSE(Find(variant([](Image& i) { i.filesz_override = 1u << 20; })));
  // namesz pointing past the segment.
  EXPECT_FALSE(Find(variant([](Image& i) {
    i.segments = {{Note{"np-exec", kNpExecNoteType, std::string(4, '\1'), 0x7fffffff}}};
  })));
}

// Hostile sizes cost a bounded number of bytes, never the sizes they claim.
TEST(ElfNoteTest, ReadsAreBounded) {
  Image many;
  many.leading_loads = kMaxProgramHeaders - 1;
  many.segments = {{Gnu()}};
  Reader r{many.Bytes()};
  EXPECT_FALSE(FindNpExecNote(r.Fn()));
  EXPECT_LE(r.total_read,
            16 + 64 + kMaxProgramHeaders * 256 + kMaxNoteSegments * kMaxNoteSegmentBytes);

  Image too_many;
  too_many.leading_loads = kMaxProgramHeaders;
  too_many.segments = {{NpExec()}};
  Reader over{too_many.Bytes()};
  EXPECT_FALSE(FindNpExecNote(over.Fn()));
  EXPECT_LE(over.total_read, 16u + 64u);  // Refused from the header alone.

  Image huge;
  huge.segments = {{NpExec()}};
  huge.filesz_override = uint64_t{1} << 40;
  Reader big{huge.Bytes()};
  EXPECT_FALSE(FindNpExecNote(big.Fn()));
  EXPECT_LE(big.largest_read, kMaxNoteSegmentBytes);

  // More note segments than the bound: refused without reading them all.
  Image notes;
  for (size_t i = 0; i <= kMaxNoteSegments; ++i) notes.segments.push_back({Gnu()});
  notes.segments.push_back({NpExec()});
  EXPECT_FALSE(Find(notes.Bytes()));
}

TEST(ElfNoteTest, TheBuiltNpExecAndItsCopiesCarryIt) {
  EXPECT_TRUE(HasNpExecNote(testing::NpExecBin()));
  testing::TempDir dir;
  const std::string copy = dir.Path("node");
  std::filesystem::copy_file(testing::NpExecBin(), copy);
  EXPECT_TRUE(HasNpExecNote(copy));
}

TEST(ElfNoteTest, OtherFilesDoNot) {
  EXPECT_FALSE(HasNpExecNote("/bin/sh"));
  EXPECT_FALSE(HasNpExecNote("/no/such/file"));
  EXPECT_FALSE(HasNpExecNote("/"));
  testing::TempDir dir;
  EXPECT_FALSE(HasNpExecNote(dir.Write("script", "#!/bin/sh\n# np-exec\n", 0755)));
  EXPECT_FALSE(HasNpExecNote(dir.Write("empty", "", 0755)));
  // The first 100 bytes of np-exec: a header whose program headers are cut.
  const std::string head = testing::ReadFile(testing::NpExecBin()).substr(0, 100);
  EXPECT_FALSE(HasNpExecNote(dir.Write("head", head, 0755)));
}

// The first page is read once; what lies beyond it is read where it is.
TEST(ElfNoteTest, ANoteBeyondTheFirstPageIsFoundInAFile) {
  Image image;
  image.leading_loads = 100;  // 64 + 100 * 56 bytes of headers: past 4096.
  image.segments = {{Gnu()}, {NpExec()}};
  const std::string bytes = image.Bytes();
  ASSERT_GT(bytes.size(), 4096u);
  testing::TempDir dir;
  EXPECT_TRUE(HasNpExecNote(dir.Write("far", bytes, 0755)));
  Image other;
  other.leading_loads = 100;
  other.segments = {{Gnu()}};
  EXPECT_FALSE(HasNpExecNote(dir.Write("far-other", other.Bytes(), 0755)));
}

// A path with a NUL names no file: it must not read the one before the NUL.
TEST(ElfNoteTest, APathWithANulIsNotRead) {
  ASSERT_TRUE(HasNpExecNote(testing::NpExecBin()));
  EXPECT_FALSE(HasNpExecNote(testing::NpExecBin() + std::string("\0/x", 3)));
}

// A FIFO named like the program must not hang the lookup.
TEST(ElfNoteTest, AFifoIsNotOpenedForAnswer) {
  testing::TempDir dir;
  const std::string fifo = dir.Path("node");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0755), 0);
  EXPECT_FALSE(HasNpExecNote(fifo));
}

}  // namespace
}  // namespace np
