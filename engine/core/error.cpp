// Formatting of source locations for error messages.
#include <adjoint/core/error.h>

#include <string_view>

namespace adjoint {

std::string format_location(const std::source_location& loc) {
    if (loc.line() == 0) return {};
    std::string_view file = loc.file_name();
    // Keep the last two path components: enough to find the file, short enough to read.
    auto cut = file.rfind('/');
    if (cut != std::string_view::npos && cut > 0) {
        auto prev = file.rfind('/', cut - 1);
        if (prev != std::string_view::npos) file = file.substr(prev + 1);
    }
    return std::string(file) + ":" + std::to_string(loc.line());
}

} // namespace adjoint
