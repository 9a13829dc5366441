// The options a program's --help lists (CLI11's layout: "  -h,--help   text"), and app/docs/programs.md's text,
// for the tests that keep the page and the programs in step.
#pragma once
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace adjoint::docs_test {

// What `program --help` prints on stdout, and its exit status.
inline std::string help_text(const std::string& program, int* status) {
    std::string out;
    FILE* pipe = popen(("'" + program + "' --help 2>/dev/null").c_str(), "r");
    if (!pipe) return out;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    *status = pclose(pipe);
    return out;
}

// Every option a help text lists: the first word of each indented line that starts with '-', split at ','
// ("-h,--help" is two options).
inline std::vector<std::string> help_options(const std::string& help) {
    std::vector<std::string> options;
    std::istringstream in(help);
    std::string line;
    while (std::getline(in, line)) {
        const size_t start = line.find_first_not_of(' ');
        if (start == 0 || start == std::string::npos || line[start] != '-') continue;
        const std::string first = line.substr(start, line.find(' ', start) - start);
        std::istringstream names(first);
        std::string name;
        while (std::getline(names, name, ','))
            if (!name.empty()) options.push_back(name);
    }
    return options;
}

inline std::string programs_doc() {
    std::ifstream in(std::string(ADJOINT_SOURCE_DIR) + "/app/docs/programs.md", std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The part of the page about one program: from its "## <program>" heading to the next "## ".
inline std::string program_section(const std::string& doc, const std::string& program) {
    const size_t at = doc.find("\n## " + program + "\n");
    if (at == std::string::npos) return {};
    const size_t end = doc.find("\n## ", at + 1);
    return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

} // namespace adjoint::docs_test
