#include "modes.hpp"

#include <cctype>
#include <cmath>

#include "options.hpp"

namespace yee {

InitSpec parse_init_mode(const std::string& spec) {
  InitSpec out;
  if (spec == "none") return out;
  if (spec == "pulse") {
    out.pulse = true;
    return out;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t plus = spec.find('+', start);
    std::string tok = spec.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    start = plus == std::string::npos ? spec.size() + 1 : plus + 1;
    // TEmnp / TMmnp with single-digit mode numbers, or TE(m,n,p) for larger ones.
    if (tok.size() < 5 || (tok.compare(0, 2, "TE") != 0 && tok.compare(0, 2, "TM") != 0))
      throw UsageError("--init-mode: '" + tok.substr(0, 40) + "' is not none, pulse or a mode like TM110 / TE101");
    std::array<int, 3> m{};
    std::string digits = tok.substr(2);
    if (digits.size() == 3 && std::isdigit((unsigned char)digits[0]) && std::isdigit((unsigned char)digits[1]) &&
        std::isdigit((unsigned char)digits[2])) {
      for (int d = 0; d < 3; ++d) m[d] = digits[d] - '0';
    } else if (digits.size() >= 7 && digits.front() == '(' && digits.back() == ')') {
      int a, b, c;
      char tail;
      if (std::sscanf(digits.c_str(), "(%d,%d,%d%c", &a, &b, &c, &tail) != 4 || tail != ')' || a < 0 || b < 0 ||
          c < 0 || a > 100000 || b > 100000 || c > 100000)
        throw UsageError("--init-mode: '" + tok.substr(0, 40) + "' has bad mode numbers");
      m = {a, b, c};
    } else {
      throw UsageError("--init-mode: '" + tok.substr(0, 40) + "' has bad mode numbers");
    }
    Mode mode;
    mode.m = m;
    mode.name = tok;
    const bool tm = tok[1] == 'M';
    if (tm && m[2] == 0 && m[0] > 0 && m[1] > 0)
      mode.comp = 2;
    else if (!tm && m[1] == 0 && m[0] > 0 && m[2] > 0)
      mode.comp = 1;
    else if (!tm && m[0] == 0 && m[1] > 0 && m[2] > 0)
      mode.comp = 0;
    else
      throw UsageError("--init-mode: '" + tok.substr(0, 40) +
                       "' is not a supported single-component mode (TMmn0, TEm0p, TE0np with nonzero m, n, p)");
    out.modes.push_back(mode);
    if (out.modes.size() > 64) throw UsageError("--init-mode: at most 64 modes");
  }
  return out;
}

double yee_mode_omega(const std::array<int, 3>& m, const std::array<long, 3>& n, double courant) {
  double s = 0.0;
  for (int d = 0; d < 3; ++d) {
    const double x = std::sin(m[d] * M_PI / (2.0 * double(n[d])));
    s += x * x;
  }
  return 2.0 / courant * std::asin(courant * std::sqrt(s));
}

}  // namespace yee
