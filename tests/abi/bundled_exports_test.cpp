// The one-entry-symbol rule (../shared/DESIGN.md): a plugin library exports
// loom_plugin_entry and no other C symbol; everything the host learns comes
// through the tables it returns. Checked on every plugin this build bundles,
// by reading each library's dynamic symbol table. Names reserved to the
// implementation (a leading underscore) are not part of the rule: C++'s
// mangled names, which inline functions and templates export unless hidden,
// and what the toolchain adds (a coverage build's __start___sancov_cntrs);
// the host never looks them up and no plugin author writes them.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// The defined global or weak symbols of the 64-bit ELF library `path`, from
// its .dynsym; empty with a test failure when the file cannot be read.
std::vector<std::string> exported_symbols(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  Elf64_Ehdr eh{};
  if (bytes.size() < sizeof eh) {
    ADD_FAILURE() << path << ": not an ELF file";
    return out;
  }
  std::memcpy(&eh, bytes.data(), sizeof eh);
  auto section = [&](size_t i) {
    Elf64_Shdr sh{};
    const size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
    if (at + sizeof sh <= bytes.size()) std::memcpy(&sh, bytes.data() + at, sizeof sh);
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dynsym = section(i);
    if (dynsym.sh_type != SHT_DYNSYM || dynsym.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr strtab = section(dynsym.sh_link);
    for (size_t k = 0; k < dynsym.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      const size_t at = dynsym.sh_offset + k * sizeof(Elf64_Sym);
      if (at + sizeof sym > bytes.size()) break;
      std::memcpy(&sym, bytes.data() + at, sizeof sym);
      const int bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      if (ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT || sym.st_name >= strtab.sh_size) continue;
      const char* name = bytes.data() + strtab.sh_offset + sym.st_name;
      out.emplace_back(name, strnlen(name, strtab.sh_size - sym.st_name));
    }
  }
  return out;
}

TEST(BundledPluginExports, EachPluginExportsTheEntrySymbolAndNoOtherCSymbol) {
  size_t libraries = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(LOOM_PLUGIN_OUTPUT_DIR)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".so") continue;
    ++libraries;
    const std::vector<std::string> symbols = exported_symbols(entry.path().string());
    bool has_entry = false;
    for (const std::string& s : symbols) {
      if (s == "loom_plugin_entry") {
        has_entry = true;
      } else if (s.empty() || s[0] != '_') {
        ADD_FAILURE() << entry.path() << " exports C symbol '" << s << "' besides loom_plugin_entry";
      }
    }
    EXPECT_TRUE(has_entry) << entry.path() << " does not export loom_plugin_entry";
  }
  EXPECT_GE(libraries, 1u) << "no plugin library under " << LOOM_PLUGIN_OUTPUT_DIR;
}

}  // namespace
