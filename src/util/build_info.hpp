#pragma once

namespace redlock {

// The git commit this binary was built from ("0fb1b19ab3c4", with "-dirty"
// when its tracked files differed from it), or "unknown". The redlock
// binary gets it from a file made at build time (packaging/build_info.cmake);
// other programs linking the library (the tests) get "unknown" from
// build_info.cpp, which the linker takes only where no other definition is.
[[nodiscard]] const char* build_commit() noexcept;

}  // namespace redlock
