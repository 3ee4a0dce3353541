// Toolchain probe (C++17): the standard library and templates work.
#include <iostream>
#include <numeric>
#include <vector>

int main()
{
    std::vector<long> values(1000);
    std::iota(values.begin(), values.end(), 1L);
    const long sum = std::accumulate(values.begin(), values.end(), 0L);
    const bool ok = sum == 500500;
    std::cout << "toolchain c++: sum 1..1000 = " << sum << (ok ? " VALID" : " INVALID") << "\n";
    return ok ? 0 : 1;
}
