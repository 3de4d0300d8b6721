// libcrypto's CPU probe, deferred from start-up to OpenSSL's own first
// initialisation.
//
// Statically linked, libcrypto puts a call of OPENSSL_cpuid_setup into the
// executable's .init section (x86_64cpuid.pl), so every np-exec process ran
// its CPUID instructions before main, although only the egress proxy's
// credential hosts ever use OpenSSL. Under a hypervisor each CPUID traps
// (9 us on the machine of BENCHMARKS.md: bench/cpuid_cost.c), and every spawn
// of every tier paid it. np-exec is linked with --wrap=OPENSSL_cpuid_setup
// (launcher/CMakeLists.txt), so that call and OpenSSL's own (ossl_init_base,
// run once by OPENSSL_init_crypto) come here. The .init section runs before
// any constructor: until the first constructor below has run this does
// nothing, and from then on it is OpenSSL's own setup, which probes once per
// process. np-exec calls egress::StartOpenSsl before any other OpenSSL
// function but one, so OpenSSL knows the CPU's features (AES-NI, not its
// table-based AES) before its first operation (tests/launcher/
// openssl_start_test.cc); a process that never uses OpenSSL never probes. The
// one is core's SHA-256 (core/sha256.cc): its low-level calls need no
// initialisation and, with the features still unknown (all zero), take
// OpenSSL's plain integer code, the same digest (tested there too). OpenSSL
// must not be called before main (by a constructor): its probe would be
// skipped for good.
extern "C" void __real_OPENSSL_cpuid_setup(void);

namespace {

bool init_section_done = false;

// The first of the constructors, which run after the .init section.
__attribute__((constructor(101))) void MarkInitSectionDone() { init_section_done = true; }

}  // namespace

extern "C" void __wrap_OPENSSL_cpuid_setup(void) {
  if (init_section_done) __real_OPENSSL_cpuid_setup();
}
