#pragma once

namespace gpufed::cli {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace gpufed::cli
