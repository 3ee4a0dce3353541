// MPI from C++ (the C API; the C++ bindings were removed in MPI-3): every rank
// contributes rank+1, the sum must be N(N+1)/2 on all ranks.
#include <mpi.h>
#include <iostream>
#include <set>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, len = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<char> host(MPI_MAX_PROCESSOR_NAME, '\0');
    MPI_Get_processor_name(host.data(), &len);

    const long mine = rank + 1, expected = static_cast<long>(size) * (size + 1) / 2;
    long total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = total == expected, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    std::vector<char> gathered(rank == 0 ? static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME : 1);
    MPI_Gather(host.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, gathered.data(),
               MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        std::set<std::string> hosts;
        for (int r = 0; r < size; ++r)
            hosts.insert(std::string(&gathered[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]));
        std::cout << "mpi c++: ranks " << size << " hosts " << hosts.size() << " sum " << total
                  << " expected " << expected << (all_ok ? " VALID" : " INVALID") << std::endl;
    }
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
