// Text for SVG/XML documents the tools write (profile timelines, histogram
// plots): the five markup characters escaped, control characters other
// than tab and newline (not allowed in XML 1.0) replaced by a space.
#pragma once

#include <string>

namespace loom::tools {

inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace loom::tools
