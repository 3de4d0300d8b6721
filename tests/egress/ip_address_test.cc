#include "core/ip_address.h"

#include <string>

#include "gtest/gtest.h"

namespace np {
namespace {

TEST(IpAddressTest, ParsesOnlyCanonicalIpv4) {
  struct Case {
    const char* text;
    bool ok;
  } cases[] = {
      {"127.0.0.1", true},   {"0.0.0.0", true},     {"255.255.255.255", true},
      {"256.0.0.1", false},  {"0177.0.0.1", false}, {"127.1", false},
      {"2130706433", false}, {"0x7f.0.0.1", false}, {"127.0.0.1.", false},
      {"127.0.0.01", false}, {"1.2.3.4.5", false},  {"", false},
      {"1..2.3", false},     {"+1.2.3.4", false},   {"1.2.3.4 ", false},
      {"1234.1.1.1", false},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseIpv4(c.text).has_value(), c.ok) << c.text;
}

TEST(IpAddressTest, ParsesIpv6AndNormalisesMappedIpv4) {
  struct Case {
    const char* text;
    const char* formatted;  // nullptr: refused
  } cases[] = {
      {"::1", "::1"},
      {"::", "::"},
      {"2001:DB8::1", "2001:db8::1"},
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
      {"fe80::1:2:3:4", "fe80::1:2:3:4"},
      {"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
      {"::ffff:127.0.0.1", "127.0.0.1"},
      {"::FFFF:7f00:1", "127.0.0.1"},
      {"0:0:0:0:0:ffff:a9fe:a9fe", "169.254.169.254"},
      {"::1.2.3.4", "::102:304"},
      {"64:ff9b::10.0.0.1", "64:ff9b::a00:1"},
      {"1:2:3:4:5:6:7:8:9", nullptr},
      {"1::2::3", nullptr},
      {":::", nullptr},
      {"1:2:3:4:5:6:7::8", nullptr},
      {"12345::", nullptr},
      {"fe80::1%eth0", nullptr},
      {"::ffff:0177.0.0.1", nullptr},
      {"1:", nullptr},
      {":1", nullptr},
      {"g::1", nullptr},
      {"", nullptr},
      {"127.0.0.1", nullptr},
  };
  for (const Case& c : cases) {
    std::optional<IpAddress> address = ParseIpv6(c.text);
    if (c.formatted == nullptr) {
      EXPECT_FALSE(address.has_value()) << c.text;
    } else {
      ASSERT_TRUE(address.has_value()) << c.text;
      EXPECT_EQ(FormatIpAddress(*address), c.formatted) << c.text;
    }
  }
}

TEST(IpAddressTest, RecognisesLooseIpv4Spellings) {
  for (const char* loose : {"2130706433", "0177.0.0.1", "127.1", "0x7f.1", "0x7f000001",
                            "127.0.0.1.1", "1.2.3.0x4", "017700000001", "127.0.1.", "00"}) {
    EXPECT_TRUE(LooksLikeLooseIpv4(loose)) << loose;
  }
  for (const char* fine :
       {"127.0.0.1", "example.com", "1.2.3.example", "123.example.com", "0x.com", "a0x1", "x"}) {
    EXPECT_FALSE(LooksLikeLooseIpv4(fine)) << fine;
  }
}

TEST(IpAddressTest, ClassifiesEveryRange) {
  struct Case {
    const char* text;
    AddressClass cls;
  } cases[] = {
      {"8.8.8.8", AddressClass::kPublic},
      {"1.1.1.1", AddressClass::kPublic},
      {"172.32.0.1", AddressClass::kPublic},
      {"100.128.0.1", AddressClass::kPublic},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.254", AddressClass::kLoopback},
      {"0.0.0.0", AddressClass::kUnspecified},
      {"169.254.169.254", AddressClass::kLinkLocal},
      {"10.1.2.3", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"192.168.1.1", AddressClass::kPrivate},
      {"100.64.0.1", AddressClass::kPrivate},
      {"100.100.100.200", AddressClass::kPrivate},  // a cloud metadata endpoint in CGNAT
      {"224.0.0.1", AddressClass::kMulticast},
      {"239.255.255.250", AddressClass::kMulticast},
      {"255.255.255.255", AddressClass::kReserved},
      {"240.0.0.1", AddressClass::kReserved},
      {"192.0.0.170", AddressClass::kReserved},
      {"198.18.0.1", AddressClass::kReserved},
      {"2606:4700::1111", AddressClass::kPublic},
      {"::1", AddressClass::kLoopback},
      {"::", AddressClass::kUnspecified},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf::1", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kPrivate},
      {"fc00::1", AddressClass::kUniqueLocal},
      {"fd00:ec2::254", AddressClass::kUniqueLocal},  // the EC2 IPv6 metadata endpoint
      {"ff02::1", AddressClass::kMulticast},
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:169.254.169.254", AddressClass::kLinkLocal},
      {"::ffff:10.0.0.1", AddressClass::kPrivate},
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"::127.0.0.1", AddressClass::kLoopback},
      {"64:ff9b::169.254.169.254", AddressClass::kLinkLocal},
      {"64:ff9b::8.8.8.8", AddressClass::kPublic},
      {"2002:7f00:1::", AddressClass::kLoopback},
      {"2002:a9fe:a9fe::1", AddressClass::kLinkLocal},
      {"2002:808:808::1", AddressClass::kPublic},
  };
  for (const Case& c : cases) {
    std::optional<IpAddress> address = ParseIpv4(c.text);
    if (!address.has_value()) address = ParseIpv6(c.text);
    ASSERT_TRUE(address.has_value()) << c.text;
    EXPECT_EQ(AddressClassName(ClassifyAddress(*address)), AddressClassName(c.cls)) << c.text;
  }
}

TEST(IpAddressTest, MappedBytesAreTheIpv4Address) {
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  std::optional<IpAddress> address = IpAddressFromBytes(mapped, 16);
  ASSERT_TRUE(address.has_value());
  EXPECT_FALSE(address->v6);
  EXPECT_EQ(*address, *ParseIpv4("127.0.0.1"));
  EXPECT_EQ(ClassifyAddress(*address), AddressClass::kLoopback);

  // A raw IpAddress that was not normalised is still classified by what it reaches.
  IpAddress raw;
  raw.v6 = true;
  for (int i = 0; i < 16; ++i) raw.bytes[i] = mapped[i];
  EXPECT_EQ(ClassifyAddress(raw), AddressClass::kLoopback);
  EXPECT_FALSE(IpAddressFromBytes(mapped, 5).has_value());
}

}  // namespace
}  // namespace np
