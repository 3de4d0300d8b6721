// np-exec writes no C++ stream: its output goes through write(2) (output.cc)
// and its files through descriptors. Yet every file that includes
// absl/status/status.h (Debian's Abseil includes <iostream> there) runs
// libstdc++'s std::ios_base::Init at start-up, which builds cout, cin, cerr,
// clog and their wide twins with the classic locale's facets: about 47
// thousand instructions and nine page faults, 1.5 % of a direct-tier spawn,
// for streams nothing writes. The executable's link wraps the constructor
// and its destructor to these (launcher/CMakeLists.txt), so they do nothing.
// tests/core/no_streams_test.cc keeps the premise true: no product source
// names a standard stream. std::ostringstream and std::ifstream need none of
// this (they build their locale themselves) and stay usable. GCC 13's
// libstdc++ makes the streams inside the library instead, where no wrap
// reaches: there the wrap has nothing to replace.
extern "C" {
void __wrap__ZNSt8ios_base4InitC1Ev(void* /*self*/) {}
void __wrap__ZNSt8ios_base4InitD1Ev(void* /*self*/) {}
}
