#include "plugin_host/elf_file.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace loom::plugin_host {
namespace {

// [offset, offset + count * size) inside a file of `file_size` bytes,
// without overflow.
bool inside(uint64_t offset, uint64_t count, uint64_t size, uint64_t file_size) {
  uint64_t bytes = 0, end = 0;
  if (__builtin_mul_overflow(count, size, &bytes) || __builtin_add_overflow(offset, bytes, &end)) return false;
  return end <= file_size;
}

}  // namespace

Status check_elf_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return not_found("no such file");
  if (!std::filesystem::is_regular_file(status)) return invalid_argument("not a regular file");
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return fail("cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot open");
  Elf64_Ehdr eh{};
  if (file_size < sizeof eh || !in.read(reinterpret_cast<char*>(&eh), sizeof eh))
    return invalid_argument("not an ELF shared library (shorter than an ELF header)");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return invalid_argument("not an ELF shared library (no ELF magic)");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalid_argument("not a 64-bit little-endian ELF object");
  if (eh.e_type != ET_DYN) return invalid_argument("not a shared object (ELF type " + std::to_string(eh.e_type) + ")");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || !inside(eh.e_phoff, eh.e_phnum, eh.e_phentsize, file_size))
    return invalid_argument("truncated or corrupt: its program header table lies past the end of the file");
  if (eh.e_shnum > 0 && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
                         !inside(eh.e_shoff, eh.e_shnum, eh.e_shentsize, file_size)))
    return invalid_argument("truncated or corrupt: its section header table lies past the end of the file");
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  if (!ph.empty() && !in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr))))
    return invalid_argument("truncated or corrupt: cannot read its program headers");
  for (const Elf64_Phdr& p : ph)
    if (p.p_type == PT_LOAD && !inside(p.p_offset, 1, p.p_filesz, file_size))
      return invalid_argument("truncated: a loadable segment ends at byte " + std::to_string(p.p_offset + p.p_filesz) +
                              " of a " + std::to_string(file_size) + "-byte file");
  return Status::ok();
}

}  // namespace loom::plugin_host
